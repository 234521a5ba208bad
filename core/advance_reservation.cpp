#include "core/advance_reservation.hpp"

#include <algorithm>
#include <array>
#include <cstdio>

#include "core/cluster_state.hpp"
#include "core/hostlist.hpp"
#include "core/submit_options.hpp"
#include "core/units.hpp"

namespace hq {
namespace {

struct FlagName {
  std::string_view name;
  uint32_t flag;
};
// In Slurm's reservation_flags_string order.
constexpr std::array<FlagName, 5> kFlagNames{{{"MAINT", kResvMaint},
                                              {"OVERLAP", kResvOverlap},
                                              {"IGNORE_JOBS", kResvIgnoreJobs},
                                              {"SPEC_NODES", kResvSpecNodes},
                                              {"ALL_NODES", kResvAllNodes}}};
// Flags Slurm has that hq does not act on: refused by name, never silently taken.
constexpr std::array<std::string_view, 20> kOtherFlags{
    "NO_MAINT", "FLEX", "HOURLY", "NO_HOURLY", "DAILY", "NO_DAILY", "WEEKDAY", "WEEKEND", "WEEKLY", "NO_WEEKLY",
    "ANY_NODES", "STATIC_ALLOC", "PART_NODES", "TIME_FLOAT", "REPLACE", "REPLACE_DOWN", "PURGE_COMP",
    "NO_HOLD_JOBS_AFTER_END", "MAGNETIC", "FIRST_CORES"};

// "MAINT,ignore_jobs" -> flags; an error names what is wrong.
Result<uint32_t> parse_flags(std::string_view text) {
  uint32_t flags = 0;
  for (std::string_view word : split(text, ',')) {
    std::string up;
    for (char ch : word) up += static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    auto known = std::find_if(kFlagNames.begin(), kFlagNames.end(), [&](const FlagName& f) { return f.name == up; });
    if (known != kFlagNames.end() && known->flag != kResvSpecNodes && known->flag != kResvAllNodes) {
      flags |= known->flag;
      continue;
    }
    if (std::find(kOtherFlags.begin(), kOtherFlags.end(), up) != kOtherFlags.end())
      return invalid("Flags=" + up + " is not supported by hq (it acts on MAINT, OVERLAP and IGNORE_JOBS)");
    return invalid("Error parsing flags " + std::string(text));
  }
  return flags;
}

// Slurm's tag matching: `tag` is a prefix of `name` at least `min` long (case aside).
bool tag_is(std::string_view tag, std::string_view name, size_t min) {
  return tag.size() >= std::min(min, name.size()) && tag.size() <= name.size() && iequals(tag, name.substr(0, tag.size()));
}

// Keys Slurm takes that hq does not: refused by name.
bool unsupported_key(std::string_view tag) {
  for (auto [name, min] : {std::pair<std::string_view, size_t>{"CoreCnt", 5}, {"CoreCount", 5}, {"CPUCnt", 5},
                           {"CPUCount", 5}, {"Licenses", 2}, {"BurstBuffer", 2}, {"Watts", 1}, {"Features", 2},
                           {"Groups", 1}, {"TRES", 1}, {"TRESPerNode", 5}, {"MaxStartDelay", 2}, {"Comment", 3},
                           {"QOS", 1}, {"AllowedPartitions", 2}})
    if (tag_is(tag, name, min)) return true;
  return false;
}

using Setter = Status (*)(ResvSettings&, std::string_view word, std::string_view val, Time now, int64_t off);

Status set_node_count(ResvSettings& s, std::string_view, std::string_view v, Time, int64_t) {
  if (v.find(',') != std::string_view::npos) return invalid("Using a comma separated array for NodeCnt is no longer valid");
  auto n = parse_int(v, 1, 1000000);
  if (!n) return invalid("\"" + std::string(v) + "\" is not a valid node count");
  s.node_count = static_cast<int32_t>(*n);
  return Status::ok();
}

Status set_time(std::optional<Time>& out, std::string_view word, std::string_view val, Time now, int64_t off,
                const char* what) {
  auto t = resolve_begin(val, now, off);
  if (!t) return invalid(std::string("Invalid ") + what + " time " + std::string(word));
  out = *t;
  return Status::ok();
}

struct Key {
  std::string_view name;
  size_t min;
  Setter set;
};
// In Slurm's matching order (scontrol_parse_res_options): the first that fits wins.
const std::array<Key, 11> kKeys{{
    {"Accounts", 1, [](ResvSettings& s, std::string_view, std::string_view v, Time, int64_t) {
       s.accounts = split_list(v);
       return Status::ok();
     }},
    {"Flags", 2, [](ResvSettings& s, std::string_view, std::string_view v, Time, int64_t) {
       auto f = parse_flags(v);
       if (!f) return f.status();
       s.flags = *f;
       return Status::ok();
     }},
    {"Users", 1, [](ResvSettings& s, std::string_view w, std::string_view v, Time, int64_t) {
       if (!v.empty() && v.front() == '-')
         return invalid("Users=-NAME (everyone but) is not supported by hq: " + std::string(w));
       s.users = split_list(v);
       return Status::ok();
     }},
    {"ReservationName", 1, [](ResvSettings& s, std::string_view w, std::string_view v, Time, int64_t) {
       bool ok = !v.empty() && v.size() <= 200 && std::all_of(v.begin(), v.end(), [](char c) {
         return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
       });
       if (!ok) return invalid("Invalid reservation name " + std::string(w) + " (letters, digits, '_', '-', '.')");
       s.name = std::string(v);
       return Status::ok();
     }},
    {"StartTime", 2, [](ResvSettings& s, std::string_view w, std::string_view v, Time now, int64_t off) {
       return set_time(s.start, w, v, now, off, "start");
     }},
    {"EndTime", 1, [](ResvSettings& s, std::string_view w, std::string_view v, Time now, int64_t off) {
       return set_time(s.end, w, v, now, off, "end");
     }},
    {"Duration", 1, [](ResvSettings& s, std::string_view w, std::string_view v, Time, int64_t) {
       bool unlimited = iequals(v, "UNLIMITED") || iequals(v, "INFINITE");
       auto d = parse_time_limit(v);
       if (!unlimited && (!d || *d <= 0)) return invalid("Invalid duration " + std::string(w));
       s.duration = unlimited ? kUnlimited : *d;
       return Status::ok();
     }},
    {"NodeCnt", 5, set_node_count},
    {"NodeCount", 5, set_node_count},
    {"Nodes", 5, [](ResvSettings& s, std::string_view w, std::string_view v, Time, int64_t) {
       if (!iequals(v, "ALL") && !expand_hostlist(v)) return invalid("Invalid node name specified: " + std::string(w));
       s.nodes = std::string(v);
       return Status::ok();
     }},
    {"PartitionName", 1, [](ResvSettings& s, std::string_view, std::string_view v, Time, int64_t) {
       s.partition = std::string(v);
       return Status::ok();
     }},
}};

const Key* find_key(std::string_view tag) {
  for (const Key& k : kKeys)
    if (tag_is(tag, k.name, k.min)) return &k;
  return nullptr;
}

// The end of a window from its start and the settings (Duration UNLIMITED: a year, as Slurm).
Time end_of(Time start, const ResvSettings& s, Time fallback) {
  if (s.duration) return start + (*s.duration == kUnlimited ? Duration{365} * 86400 : *s.duration);
  if (s.end) return *s.end;
  return fallback;
}

// When a running job gives its node back: its limit's end, or never.
bool job_busy_after(const Job& job, Time t) { return job.time_limit == kUnlimited || job.suspended || limit_end(job) > t; }

// Whether `node` is free for `r` over its window: no job runs there past its start (but
// its own, or any with IGNORE_JOBS) and no other reservation holds it then (unless OVERLAP).
bool node_free(const ClusterState& state, const AdvanceReservation& r, const std::string& node) {
  if (!(r.flags & kResvIgnoreJobs)) {
    if (auto it = state.nodes.find(node); it != state.nodes.end()) {
      for (JobId id : it->second.jobs)
        if (const Job* job = find_job(state, id); job && job->state == JobState::kRunning &&
            job->spec.extra->reservation != r.name && job_busy_after(*job, r.start))
          return false;
    }
  }
  for (const auto& [name, other] : state.reservations)
    if (name != r.name && !((r.flags | other.flags) & kResvOverlap) && other.overlaps(r.start, r.end) && other.holds(node))
      return false;
  return true;
}

// slurmctld answers "busy" both for jobs and for an overlap.
Status check_free(const ClusterState& state, const AdvanceReservation& r) {
  for (const std::string& node : r.nodes)
    if (!node_free(state, r, node)) return invalid("Requested nodes are busy");
  return Status::ok();
}

const PartitionConfig* partition_named(const ClusterState& state, std::string_view name) {
  for (const auto& p : state.partitions)
    if (name.empty() ? p.is_default : p.name == name) return &p;
  return name.empty() && !state.partitions.empty() ? &state.partitions.front() : nullptr;
}

// Fills r.nodes from Nodes= or NodeCnt= (free nodes of the partition, in node order).
Status choose_nodes(const ClusterState& state, const ResvSettings& s, AdvanceReservation& r) {
  const PartitionConfig* part = partition_named(state, r.partition);
  if (!part) return invalid("Invalid partition name specified");
  if (s.nodes) {
    r.flags |= kResvSpecNodes;
    if (iequals(*s.nodes, "ALL")) {
      r.flags |= kResvAllNodes;
      if (r.partition.empty()) {
        r.nodes.clear();
        for (const auto& [name, node] : state.nodes) r.nodes.push_back(name);
      } else {
        r.nodes = part->nodes;
      }
    } else {
      auto names = expand_hostlist(*s.nodes);
      if (!names) return invalid("Invalid node name specified");
      for (const auto& n : *names)
        if (!state.nodes.count(n)) return invalid("Invalid node name specified");
      r.nodes = *names;
    }
  } else if (s.node_count) {
    r.nodes.clear();
    for (const std::string& name : part->nodes) {
      if (static_cast<int32_t>(r.nodes.size()) == *s.node_count) break;
      if (node_free(state, r, name)) r.nodes.push_back(name);
    }
    if (static_cast<int32_t>(r.nodes.size()) < *s.node_count) return invalid("Requested nodes are busy");
  }
  std::sort(r.nodes.begin(), r.nodes.end(), natural_less);
  r.nodes.erase(std::unique(r.nodes.begin(), r.nodes.end()), r.nodes.end());
  return Status::ok();
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ",") + s;
  return out;
}

}  // namespace

bool AdvanceReservation::holds(std::string_view node) const {
  return std::binary_search(nodes.begin(), nodes.end(), node,
                            [](std::string_view a, std::string_view b) { return natural_less(a, b); });
}

bool AdvanceReservation::admits(std::string_view user, std::string_view account) const {
  return std::find(users.begin(), users.end(), user) != users.end() ||
         (!account.empty() && std::find(accounts.begin(), accounts.end(), account) != accounts.end());
}

Result<ResvSettings> parse_resv_settings(const std::vector<std::string>& words, Time now, int64_t utc_offset) {
  ResvSettings s;
  for (const std::string& word : words) {
    size_t eq = word.find('=');
    if (eq == std::string::npos) {
      if (word.size() >= 3 && iequals(std::string_view(word).substr(0, 3), "res")) continue;  // "reservation": the object
      return invalid("Misformatted parameter '" + word + "', most options have a parameter after '='");
    }
    std::string_view tag = std::string_view(word).substr(0, eq), val = std::string_view(word).substr(eq + 1);
    if (!tag.empty() && (tag.back() == '+' || tag.back() == '-'))
      return invalid("The +=/-= notation is not supported by hq: " + word);
    if (const Key* key = find_key(tag)) {
      if (Status st = key->set(s, word, val, now, utc_offset); !st) return st;
    } else if (unsupported_key(tag)) {
      return invalid(std::string(tag) + "= is not supported by hq (reservations hold whole nodes)");
    } else {
      return invalid("Unknown parameter " + word);
    }
  }
  return s;
}

Status check_resv_create(const ResvSettings& s) {
  if (s.start && s.end && *s.start > *s.end) return invalid("Start time cannot be after end time");
  if (!s.users && !s.accounts) return invalid("Either Users/Groups and/or Accounts must be specified");
  if (!s.nodes && !s.node_count) return invalid("CoreCnt, Nodes, NodeCnt, BurstBuffer, Licenses or Watts must be specified");
  if (!s.duration && !s.end) return invalid("Duration or EndTime must be specified");
  return Status::ok();
}

Result<AdvanceReservation> create_reservation(const ClusterState& state, const ResvSettings& s, Time now, uint64_t id) {
  if (Status st = check_resv_create(s); !st) return st;
  AdvanceReservation r;
  r.id = id;
  const std::vector<std::string>& owners = s.accounts && !s.accounts->empty() ? *s.accounts : *s.users;
  r.name = s.name ? *s.name : (owners.empty() ? "resv" : owners.front()) + "_" + std::to_string(id);
  if (state.reservations.count(r.name)) return invalid("Duplicate reservation name");
  r.start = s.start ? std::max(*s.start, now) : now;
  r.end = end_of(r.start, s, r.start);
  if (r.end <= r.start) return invalid("Start time cannot be after end time");
  r.users = s.users.value_or(std::vector<std::string>{});
  r.accounts = s.accounts.value_or(std::vector<std::string>{});
  r.partition = s.partition.value_or("");
  r.flags = s.flags.value_or(0);
  if (Status st = choose_nodes(state, s, r); !st) return st;
  if (Status st = check_free(state, r); !st) return st;
  return r;
}

Result<AdvanceReservation> update_reservation(const ClusterState& state, const AdvanceReservation& current,
                                              const ResvSettings& s, Time now) {
  AdvanceReservation r = current;
  Duration length = r.end - r.start;
  if (s.start) r.start = *s.start;
  r.end = s.duration || s.end ? end_of(r.start, s, r.end) : r.start + length;
  if (r.end <= r.start || r.end <= now) return invalid("Start time cannot be after end time");
  if (s.users) r.users = *s.users;
  if (s.accounts) r.accounts = *s.accounts;
  if (r.users.empty() && r.accounts.empty()) return invalid("Either Users/Groups and/or Accounts must be specified");
  if (s.partition) r.partition = *s.partition;
  if (s.flags) r.flags = *s.flags | (current.flags & (kResvSpecNodes | kResvAllNodes));
  if (s.nodes || s.node_count) {
    r.flags &= ~(kResvSpecNodes | kResvAllNodes);
    if (Status st = choose_nodes(state, s, r); !st) return st;
  }
  if (r.start != current.start || r.end != current.end || r.nodes != current.nodes || r.flags != current.flags) {
    if (Status st = check_free(state, r); !st) return st;
  }
  return r;
}

bool reservation_in_use(const ClusterState& state, std::string_view name) {
  for (const auto& [id, job] : state.jobs)
    if ((job.state == JobState::kPending || job.state == JobState::kRunning) && job.spec.extra->reservation == name)
      return true;
  return false;
}

std::string resv_flags_string(uint32_t flags) {
  std::string out;
  for (const FlagName& f : kFlagNames)
    if (flags & f.flag) out += (out.empty() ? "" : ",") + std::string(f.name);
  return out;
}

std::string format_reservation(const AdvanceReservation& r, Time now, int64_t cpus, bool one_liner) {
  std::string sep = one_liner ? " " : "\n   ";
  std::string out = "ReservationName=" + r.name + " StartTime=" + format_timestamp(r.start) +
                    " EndTime=" + format_timestamp(r.end) + " Duration=" + format_limit(r.end - r.start);
  out += sep + "Nodes=" + or_null(compress_hostlist(r.nodes, HostlistOrder::kSorted)) +
         " NodeCnt=" + std::to_string(r.nodes.size()) + " CoreCnt=" + std::to_string(cpus) +
         " Features=(null) PartitionName=" + or_null(r.partition) + " Flags=" + resv_flags_string(r.flags);
  out += sep + "TRES=cpu=" + std::to_string(cpus);
  out += sep + "Users=" + or_null(joined(r.users)) + " Groups=(null) Accounts=" + or_null(joined(r.accounts)) +
         " Licenses=(null) State=" + (r.start <= now && now <= r.end ? "ACTIVE" : "INACTIVE") +
         " BurstBuffer=(null) Watts=n/a";
  out += sep + "MaxStartDelay=(null)\n";
  if (!one_liner) out += "\n";
  return out;
}

std::string format_reservation_table(const std::vector<AdvanceReservation>& list, Time now, bool header) {
  if (list.empty()) return "No reservations in the system\n";
  size_t width = 9;
  for (const auto& r : list) width = std::max(width, r.name.size());
  auto row = [&](std::string_view name, std::string_view state, const std::string& start, const std::string& end,
                 const std::string& duration, const std::string& nodes) {
    std::string line(name);
    line.resize(std::max(width, name.size()), ' ');
    auto right = [](std::string_view s, size_t w) { return std::string(w > s.size() ? w - s.size() : 0, ' ') + std::string(s); };
    return line + "  " + right(state, 8) + "  " + right(start, 19) + "  " + right(end, 19) + "  " + right(duration, 11) +
           "  " + nodes + "\n";
  };
  std::string out = header ? row("RESV_NAME", "STATE", "START_TIME", "END_TIME", "DURATION", "NODELIST") : "";
  for (const auto& r : list)
    out += row(r.name, r.start <= now && now <= r.end ? "ACTIVE" : "INACTIVE", format_timestamp(r.start),
               format_timestamp(r.end), format_limit(r.end - r.start), compress_hostlist(r.nodes, HostlistOrder::kSorted));
  return out;
}

}  // namespace hq
