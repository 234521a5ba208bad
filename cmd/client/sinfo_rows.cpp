#include "cmd/client/sinfo_rows.hpp"

#include <algorithm>
#include <map>

#include "cmd/client/output.hpp"
#include "cmd/commands.hpp"
#include "cmd/users.hpp"
#include "core/hostlist.hpp"
#include "core/units.hpp"

namespace hq::cmd {
namespace {

std::string state_complete(const SinfoNodeState& s) {  // "idle+drain+not_responding"
  SinfoNodeState base = s;
  base.drain = base.no_respond = base.planned = base.blocked = false;
  std::string out = sinfo_state_long(base);
  if (s.drain) out += "+drain";
  if (s.no_respond) out += "+not_responding";
  if (s.blocked) out += "+blocked";
  if (s.planned) out += "+planned";
  return out;
}

// What a partition shows for a partition-level field (and what rows are split by).
std::string partition_value(const pb::Partition* p, char code, const std::string& cluster) {
  if (!p) return code == 'V' ? cluster : "n/a";
  switch (code) {
    case 'P': return p->name() + (p->is_default() ? "*" : "");
    case 'R': return p->name();
    case 'a': return to_lower(p->state());
    case 'l': return p->max_time() < 0 ? "infinite" : format_elapsed(p->max_time());
    case 'L': return p->default_time() <= 0 ? "n/a" : format_elapsed(p->default_time());
    case 's': {
      int32_t lo = std::max(1, p->min_nodes());
      if (p->max_nodes() <= 0) return std::to_string(lo) + "-infinite";
      return lo == p->max_nodes() ? std::to_string(lo) : std::to_string(lo) + "-" + std::to_string(p->max_nodes());
    }
    case 'r': return "no";
    case 'h': return "NO";
    case 'g': case 'S': return "all";
    case 'B': return "UNLIMITED";
    case 'M': return p->preempt_mode();
    case 'p': return std::to_string(p->priority_tier());
    case 'I': return std::to_string(p->priority_job_factor());
    case 'V': return cluster;
    default: return "";
  }
}

// What a node shows for a node-level field (and what rows are split by).
std::string node_value(const pb::Node& n, char code) {
  switch (code) {
    case 't': return sinfo_state_compact(sinfo_state_of(n));
    case 'T': return sinfo_state_long(sinfo_state_of(n));
    case kSiStateComplete: return state_complete(sinfo_state_of(n));
    case 'E': return n.reason().empty() ? "none" : n.reason();
    case 'H': return n.reason_time() > 0 ? local_time(n.reason_time()) : "Unknown";
    case 'u': return n.has_reason_uid() ? user_name(n.reason_uid()) : "Unknown";
    case 'U': return n.has_reason_uid() ? user_name(n.reason_uid()) + "(" + std::to_string(n.reason_uid()) + ")" : "Unknown";
    case 'f': case 'b': return or_null(comma_joined(n.features()));
    case 'G': return or_null(n.gres());
    case kSiGresUsed: return or_null(n.gres_used());
    case kSiAllocMem: return std::to_string(n.alloc_mem_mib());
    case 'n': case 'o': return n.name();
    case kSiReservation: return n.reservation();
    case kSiComment: case kSiExtra: return "(null)";
    // the -e fields: the exact value
    case 'c': case 'C': case 'X': return std::to_string(n.cpus());
    case 'z': return std::to_string(n.cpus()) + ":1:1";
    case 'm': return std::to_string(n.mem_mib());
    case 'w': return std::to_string(n.weight());
    default: return "";  // Y Z d O e v Port: the same on every node
  }
}

bool busy(const SinfoNodeState& s) { return s.base == NodeBase::kAllocated || s.base == NodeBase::kMixed; }
bool out_of_service(const SinfoNodeState& s) { return s.drain || s.base == NodeBase::kDown; }

struct Counts {
  int64_t alloc = 0, idle = 0, other = 0, total = 0;
};
Counts node_counts(const SinfoRow& r) {
  Counts c;
  for (const pb::Node* n : r.nodes) {
    SinfoNodeState s = sinfo_state_of(*n);
    (busy(s) ? c.alloc : out_of_service(s) ? c.other : c.idle) += 1;
    ++c.total;
  }
  return c;
}
Counts cpu_counts(const SinfoRow& r) {
  Counts c;
  for (const pb::Node* n : r.nodes) {
    int64_t left = std::max(0, n->cpus() - n->alloc_cpus());
    c.alloc += n->alloc_cpus();
    (out_of_service(sinfo_state_of(*n)) ? c.other : c.idle) += left;
    c.total += n->cpus();
  }
  return c;
}
std::string aiot(const Counts& c) {
  return std::to_string(c.alloc) + "/" + std::to_string(c.idle) + "/" + std::to_string(c.other) + "/" +
         std::to_string(c.total);
}

// Slurm's "min" or "min+" over the row's nodes.
template <typename F>
std::string min_plus(const SinfoRow& r, F value) {
  if (r.nodes.empty()) return "0";
  int64_t lo = value(*r.nodes[0]), hi = lo;
  for (const pb::Node* n : r.nodes) {
    lo = std::min<int64_t>(lo, value(*n));
    hi = std::max<int64_t>(hi, value(*n));
  }
  return lo == hi ? std::to_string(lo) : std::to_string(lo) + "+";
}

std::string node_names(const SinfoRow& r) {
  std::vector<std::string> names;
  names.reserve(r.nodes.size());
  for (const pb::Node* n : r.nodes) names.push_back(n->name());
  return compress_hostlist(names, HostlistOrder::kSorted);
}

}  // namespace

SinfoNodeState sinfo_state_of(const pb::Node& n) {
  SinfoNodeState s;
  const std::string& st = n.state();
  bool full = n.cpus() > 0 && n.alloc_cpus() >= n.cpus();
  if (st == "IDLE") s.base = NodeBase::kIdle;
  else if (st == "MIXED") s.base = NodeBase::kMixed;
  else if (st == "ALLOCATED") s.base = NodeBase::kAllocated;
  else if (st == "DOWN") s.base = NodeBase::kDown;
  else if (st == "DRAINING") s.drain = true, s.base = full ? NodeBase::kAllocated : NodeBase::kMixed;
  else if (st == "DRAINED") s.drain = true, s.base = NodeBase::kIdle;
  else if (st == "DOWN+DRAIN") s.drain = true, s.base = NodeBase::kDown;
  s.no_respond = !n.responding();
  s.planned = n.planned() && !s.drain && (s.base == NodeBase::kIdle || s.base == NodeBase::kMixed);
  s.reserved = !n.reservation().empty();
  s.blocked = n.blocked() && s.base == NodeBase::kIdle && !s.drain;
  s.maint = n.maint();
  return s;
}

std::string sinfo_value(const SinfoRow& r, char code, const std::string& cluster) {
  switch (sinfo_match(code)) {
    case SinfoMatch::kPartition: return partition_value(r.part, code, cluster);
    default: break;
  }
  const pb::Node* first = r.nodes.empty() ? nullptr : r.nodes[0];
  switch (code) {
    case 'V': return cluster;
    case 'S': return partition_value(r.part, code, cluster);
    case 'D': return std::to_string(r.nodes.size());
    case 'A': {
      Counts c = node_counts(r);
      return std::to_string(c.alloc) + "/" + std::to_string(c.idle);
    }
    case 'F': return aiot(node_counts(r));
    case 'C': return aiot(cpu_counts(r));
    case 'N': case 'n': case 'o': return node_names(r);
    case 'c': case 'X': return min_plus(r, [](const pb::Node& n) { return n.cpus(); });
    case 'z': return min_plus(r, [](const pb::Node& n) { return n.cpus(); }) + ":1:1";
    case 'Y': case 'Z': return "1";
    case 'm': return min_plus(r, [](const pb::Node& n) { return n.mem_mib(); });
    case 'w': return min_plus(r, [](const pb::Node& n) { return n.weight(); });
    case 'd': return "0";
    case 'O': case 'e': case kSiPort: return "N/A";
    case 'v': return kHqVersion;
    case 't': case 'T': case kSiStateComplete:
      if (!first) return "n/a";
      return node_value(*first, code);
    case 'E': return first ? node_value(*first, code) : "none";
    default: return first ? node_value(*first, code) : "(null)";
  }
}

std::vector<SinfoRow> sinfo_rows(const pb::NodesReply& reply, const ColumnFormat& format, const SinfoOptions& o) {
  std::vector<char> part_codes, node_codes;
  bool names_partitions = false;
  for (const FormatItem& it : format.items) {
    if (!it.field) continue;
    SinfoMatch m = sinfo_match(it.field);
    if (m == SinfoMatch::kPartition) part_codes.push_back(it.field);
    if (m == SinfoMatch::kNode || (m == SinfoMatch::kExact && o.exact)) node_codes.push_back(it.field);
    names_partitions |= it.field == 'P' || it.field == 'R';
  }
  auto wanted_partition = [&](const pb::Partition& p) {
    return o.partitions.empty() || std::find(o.partitions.begin(), o.partitions.end(), p.name()) != o.partitions.end();
  };
  auto passes = [&](const pb::Node& n) {
    SinfoNodeState s = sinfo_state_of(n);
    if (o.nodes && !o.nodes->count(n.name())) return false;
    if (o.dead_only && !s.no_respond) return false;
    if (o.responding_only && s.no_respond) return false;
    return !o.states || sinfo_state_matches(*o.states, s, n.alloc_cpus());
  };
  auto same_partition = [&](const SinfoRow& r, const pb::Partition* p) {
    if (o.reasons || r.part == p) return true;
    if (!r.part || !p) return false;
    return std::all_of(part_codes.begin(), part_codes.end(), [&](char c) {
      return partition_value(r.part, c, "") == partition_value(p, c, "");
    });
  };
  auto same_node = [&](const SinfoRow& r, const pb::Node& n) {
    if (o.node_oriented) return false;
    return std::all_of(node_codes.begin(), node_codes.end(),
                       [&](char c) { return node_value(*r.nodes[0], c) == node_value(n, c); });
  };
  std::map<std::string, const pb::Node*> by_name;
  for (const auto& n : reply.nodes()) by_name[n.name()] = &n;
  std::vector<SinfoRow> rows;
  if (!o.node_oriented && names_partitions)  // every partition is shown, even without nodes
    for (int i = 0; i < reply.partitions_size(); ++i)
      if (wanted_partition(reply.partitions(i))) rows.push_back({&reply.partitions(i), i, {}});
  for (int i = 0; i < reply.partitions_size(); ++i) {
    const pb::Partition& p = reply.partitions(i);
    if (!wanted_partition(p)) continue;
    auto names = expand_hostlist(p.nodes());
    for (const auto& name : names ? *names : std::vector<std::string>{}) {
      auto it = by_name.find(name);
      if (it == by_name.end() || !passes(*it->second)) continue;
      const pb::Node& n = *it->second;
      auto row = std::find_if(rows.begin(), rows.end(), [&](const SinfoRow& r) {
        return same_partition(r, &p) && (r.nodes.empty() || same_node(r, n));
      });
      if (row == rows.end()) rows.push_back({&p, i, {&n}});
      else if (std::find(row->nodes.begin(), row->nodes.end(), &n) == row->nodes.end()) row->nodes.push_back(&n);
    }
  }
  return rows;
}

namespace {

// One -S key's comparison, as Slurm's sinfo/sort.c: <0, 0, >0.
int compare_rows(const SinfoRow& a, const SinfoRow& b, char key, bool config_order) {
  auto cmp = [](const auto& x, const auto& y) { return x < y ? -1 : y < x ? 1 : 0; };
  auto first = [](const SinfoRow& r) { return r.nodes.empty() ? std::string() : r.nodes[0]->name(); };
  auto state = [](const SinfoRow& r) { return r.nodes.empty() ? 0u : sinfo_state_number(sinfo_state_of(*r.nodes[0])); };
  switch (key) {
    case 'P': case 'R':
      if (config_order) return cmp(a.part_index, b.part_index);
      return cmp(a.part ? a.part->name() : "", b.part ? b.part->name() : "");
    case 't': case 'T': return cmp(state(a), state(b));
    case 'N': case 'n': case 'o': {
      std::string x = first(a), y = first(b);
      return natural_less(x, y) ? -1 : natural_less(y, x) ? 1 : 0;
    }
    case 'D': return cmp(a.nodes.size(), b.nodes.size());
    case 'c': case 'm': case 'w': case 'E': case 'H': case 'u': case 'U': case 'f': case 'G': {
      std::string x = sinfo_value(a, key, ""), y = sinfo_value(b, key, "");
      bool numeric = key == 'c' || key == 'm' || key == 'w';
      if (numeric) return cmp(std::atoll(x.c_str()), std::atoll(y.c_str()));
      return cmp(x, y);
    }
    case 'l': return cmp(a.part ? a.part->max_time() : 0, b.part ? b.part->max_time() : 0);
    case 'a': case 'p': case 's': return cmp(sinfo_value(a, key, ""), sinfo_value(b, key, ""));
    default: return 0;
  }
}

}  // namespace

void sort_sinfo_rows(std::vector<SinfoRow>& rows, std::string_view keys) {
  for (size_t i = keys.size(); i-- > 0;) {  // the last key first, as Slurm's list sorts
    char key = keys[i];
    if (key == ',' || key == '#' || key == '+' || key == '-') continue;
    bool reverse = i > 0 && keys[i - 1] == '-', config_order = i > 0 && keys[i - 1] == '#';
    std::stable_sort(rows.begin(), rows.end(), [&](const SinfoRow& a, const SinfoRow& b) {
      int c = compare_rows(a, b, key, config_order);
      return reverse ? c > 0 : c < 0;
    });
  }
}

void print_sinfo(const std::vector<SinfoRow>& rows, const ColumnFormat& format, const std::string& cluster,
                 bool header, bool fit_partition, bool fit_nodelist, const SinfoExtra& extra) {
  ColumnFormat f = format;
  int part_width = 9, node_width = 9;
  for (const SinfoRow& r : rows) {
    if (r.part) part_width = std::max(part_width, static_cast<int>(r.part->name().size() + (r.part->is_default() ? 1 : 0)));
    if (fit_nodelist) node_width = std::max(node_width, static_cast<int>(node_names(r).size()));
  }
  for (FormatItem& it : f.items) {
    if (it.field == 'P' && fit_partition) it.width = part_width;
    if (it.field == 'N' && fit_nodelist) it.width = node_width;
  }
  std::string suffix = extra ? " " + extra(nullptr) : "";
  std::string text;
  if (header) {  // node list titles are never cut (Slurm's)
    ColumnFormat titles = f;
    for (FormatItem& it : titles.items)
      if ((it.field == 'N' || it.field == 'n' || it.field == 'o') && it.width > 0)
        it.width = std::max(it.width, static_cast<int>(sinfo_header(it.field).size()));
    text += format_line(titles, [](char c) { return std::string(sinfo_header(c)); }) + suffix + "\n";
  }
  for (const SinfoRow& r : rows) {
    std::string line;
    for (const FormatItem& it : f.items) {
      if (!it.field) line += it.literal;
      else if (it.field == 'P' && r.part && r.part->is_default() && it.width > 0 &&
               static_cast<int>(r.part->name().size()) >= it.width)  // the '*' takes the last place
        line += fit_cell(r.part->name().substr(0, static_cast<size_t>(it.width - 1)) + "*", it);
      else line += fit_cell(sinfo_value(r, it.field, cluster), it);
    }
    text += line + (extra ? " " + extra(&r) : "") + "\n";
  }
  print_text(text);  // without the C++ streams, where nothing else has built them
}

}  // namespace hq::cmd
