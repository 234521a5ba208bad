// sacctmgr list events (Slurm's event_functions.c): the nodes' spans out of service the
// store keeps (core/node_span.hpp; hq records no cluster events), selected with sacctmgr's
// conditions (the window defaults to yesterday's midnight, or now with States=; All_Time,
// Clusters, Events, Nodes, Reason, States, User, MinCPUs, MaxCPUs) and printed in its
// columns. Pure; thread-safe.
#include <algorithm>
#include <cstdlib>

#include "core/acctmgr_internal.hpp"
#include "core/hostlist.hpp"
#include "core/sacct_format.hpp"
#include "core/submit_options.hpp"
#include "core/units.hpp"

namespace hq {

bool acctmgr_lists_events(const std::vector<std::string>& words) {
  if (words.size() < 2) return false;
  const std::string& verb = words[0];
  return (acctmgr::key_is(verb, "show", 3) || acctmgr::key_is(verb, "list", 3)) && acctmgr::key_is(words[1], "Events", 1);
}

namespace acctmgr {
namespace {

constexpr int64_t kNodeEvent = 2;       // SLURMDB_EVENT_NODE
constexpr int64_t kStateDown = 1;       // NODE_STATE_DOWN
constexpr int64_t kStateDrained = 514;  // NODE_STATE_IDLE | NODE_STATE_DRAIN

struct EventCond {
  std::vector<std::string> clusters, nodes, reasons, states;
  std::vector<uint32_t> uids;
  std::vector<std::string> format;
  Time start = 0, end = 0;
  bool all_clusters = false, all_time = false, cluster_events = false, node_events = false;
  int64_t min_cpus = -1, max_cpus = -1;
};

std::vector<std::string> items(std::string_view list) {
  std::vector<std::string> out;
  const std::string text = unquoted(list);  // split's views point into it: it outlives the loop
  for (auto p : split(text, ','))
    if (!p.empty()) out.emplace_back(p);
  return out;
}

// A state name as _decode_node_state takes it (a prefix of at least 3): "DOWN" or "DRAIN"
// (the states a span has), another node state (no span has it), or an error.
Result<std::string> state_name(const std::string& given) {
  static const char* kStates[] = {"DRAIN", "FAIL", "UNKNOWN", "DOWN", "IDLE", "ALLOCATED", "ERROR", "MIXED", "FUTURE"};
  for (const char* s : kStates)
    if (key_is(given, s, 3)) return std::string(s);
  return invalid("Invalid state: " + given + "\nValid node states are: DRAIN FAIL UNKNOWN DOWN IDLE ALLOCATED ? MIXED "
                 "FUTURE \nsacctmgr: fatal: unrecognized job state value\n");
}

// One condition word (event_functions.c's _set_cond); false and the error printed when bad.
bool take_condition(Ctx& cx, const Word& w, EventCond& c, const AcctEvents& src) {
  const std::string& k = w.key;
  if (!w.has_value && key_is(k, "all_clusters", 5)) return c.all_clusters = true;
  if (!w.has_value && key_is(k, "all_time", 5)) return c.all_time = true;
  if (!w.has_value && key_is(k, "where", 5)) return true;
  if (!w.has_value || key_is(k, "Events", 1)) {  // a bare word names event types too
    for (const std::string& type : items(w.has_value ? w.value : k)) {
      if (key_is(type, "Node", 1)) c.node_events = true;
      else if (key_is(type, "Cluster", 1)) c.cluster_events = true;
      else cx.io.fail(" Unknown event type: '" + type + "'  Valid events are Cluster and Node.\n");
    }
    return cx.io.rc == 0;
  }
  auto when = [&](Time& to) {
    auto t = resolve_begin(unquoted(w.value), src.now, src.utc_offset);
    if (!t) return cx.io.fail(" Invalid time: " + w.value + "\n"), false;
    to = *t;
    return true;
  };
  auto cpus = [&](int64_t& to, const char* what) {
    auto n = parse_int(unquoted(w.value), 0, 4294967294LL);
    if (!n) return cx.io.fail(" Bad " + std::string(what) + " value: " + w.value + "\n"), false;
    to = *n;
    return true;
  };
  if (key_is(k, "Clusters", 1)) return c.clusters = items(w.value), true;
  if (key_is(k, "End", 1)) return when(c.end);
  if (key_is(k, "Format", 1)) {
    for (auto& f : items(w.value)) c.format.push_back(f);
    return true;
  }
  if (key_is(k, "MinCpus", 2)) return cpus(c.min_cpus, "MinCpus");
  if (key_is(k, "MaxCpus", 2)) return cpus(c.max_cpus, "MaxCpus");
  if (key_is(k, "Nodes", 1)) {
    for (const std::string& expr : items(w.value)) {
      auto names = expand_hostlist(expr);
      if (!names) return cx.io.fail(" Invalid node list: " + expr + "\n"), false;
      c.nodes.insert(c.nodes.end(), names->begin(), names->end());
    }
    return true;
  }
  if (key_is(k, "Reason", 1)) return c.reasons = items(w.value), true;
  if (key_is(k, "Start", 4)) return when(c.start);
  if (key_is(k, "States", 4)) {
    for (const std::string& given : items(w.value)) {
      auto s = state_name(given);
      if (!s) return cx.io.fail(s.status().message()), false;
      c.states.push_back(*s);
    }
    c.node_events = true;
    return true;
  }
  if (key_is(k, "User", 1)) {
    for (const std::string& name : items(w.value)) {
      // A name is one of the spans' users (it is no one else's: nothing it did is kept).
      auto it = std::find_if(src.user_names.begin(), src.user_names.end(), [&](const auto& u) { return u.second == name; });
      bool numeric = !name.empty() && std::all_of(name.begin(), name.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
      c.uids.push_back(it != src.user_names.end() ? it->first
                       : numeric                  ? static_cast<uint32_t>(std::strtoul(name.c_str(), nullptr, 10))
                                                  : UINT32_MAX);
    }
    c.node_events = true;
    return true;
  }
  cx.io.fail(" Unknown condition: " + k + (w.has_value ? "=" + w.value : "") + "\n");
  return false;
}

bool selected(const EventCond& c, const NodeSpan& s) {
  if (c.cluster_events && !c.node_events) return false;  // hq records no cluster events
  if (s.start >= (c.end ? c.end : INT64_MAX) || (s.end != 0 && s.end < c.start)) return false;
  auto in = [](const auto& list, const auto& v) { return list.empty() || std::find(list.begin(), list.end(), v) != list.end(); };
  if (!in(c.nodes, s.node) || !in(c.states, s.state) || !in(c.uids, s.uid)) return false;
  if (!c.reasons.empty() && std::none_of(c.reasons.begin(), c.reasons.end(),
                                         [&](const std::string& r) { return s.reason.find(r) != std::string::npos; }))
    return false;
  return (c.min_cpus < 0 || s.cpus >= c.min_cpus) && (c.max_cpus < 0 || s.cpus <= c.max_cpus);
}

// The node's TRES then, as Slurm's event table keeps it ("billing=16,cpu=16,mem=1000M").
std::string tres_of(const NodeSpan& s) {
  std::string cpus = std::to_string(s.cpus);  // by name, as the event table prints them
  return "billing=" + cpus + ",cpu=" + cpus + (s.gpus > 0 ? ",gres/gpu=" + std::to_string(s.gpus) : "") + "," +
         format_tres({{"mem", s.mem_mib}});
}

// Slurm's local date ("2026-11-29T10:00:00"; 0 "Unknown").
std::string date(Time t, int64_t utc_offset) { return t ? format_timestamp(t + utc_offset) : "Unknown"; }

std::string value_of(std::string_view field, const NodeSpan& s, const AcctEvents& src) {
  if (field == "Cluster") return src.cluster;
  if (field == "Cluster Nodes") return "";
  if (field == "CPU Cnt") return std::to_string(s.cpus);
  if (field == "Duration") return format_limit((s.end ? s.end : src.now) - s.start);
  if (field == "TimeEnd") return date(s.end, src.utc_offset);
  if (field == "EventRaw") return std::to_string(kNodeEvent);
  if (field == "Event") return "Node";
  if (field == "NodeName") return s.node;
  if (field == "TRES") return tres_of(s);
  if (field == "Reason") return s.reason;
  if (field == "TimeStart") return date(s.start, src.utc_offset);
  if (field == "StateRaw") return std::to_string(s.state == "DOWN" ? kStateDown : kStateDrained);
  if (field == "State") return s.state;
  if (field == "User") {
    auto it = src.user_names.find(s.uid);
    return (it == src.user_names.end() ? std::to_string(s.uid) : it->second) + "(" + std::to_string(s.uid) + ")";
  }
  return "";
}

}  // namespace

void list_events(Ctx& cx, const std::vector<Word>& words) {
  const AcctEvents& src = cx.options.events;
  EventCond c;
  for (const Word& w : words)
    if (!take_condition(cx, w, c, src)) return;
  if (!c.all_time && !c.start) {  // yesterday's midnight, or now when states are asked for
    Time local = src.now + src.utc_offset;
    c.start = c.states.empty() ? local - local % 86400 - 86400 - src.utc_offset : src.now;
  }
  if (c.format.empty())
    c.format = c.cluster_events && !c.node_events
                   ? std::vector<std::string>{"Cluster", "TRES", "Start", "End", "ClusterNodes"}
                   : std::vector<std::string>{"Cluster", "NodeNames", "Start", "End", "State", "Reason", "User"};
  bool ours = c.all_clusters || c.clusters.empty() ||
              std::find(c.clusters.begin(), c.clusters.end(), src.cluster) != c.clusters.end();
  std::vector<std::function<std::string(std::string_view)>> rows;
  for (const NodeSpan& s : src.spans)
    if (ours && selected(c, s)) rows.push_back([&s, &src](std::string_view f) { return value_of(f, s, src); });
  print_rows(cx, c.format, rows);
}

}  // namespace acctmgr
}  // namespace hq
