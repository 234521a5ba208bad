#include "core/sinfo_format.hpp"

#include "core/units.hpp"

namespace hq {
namespace {

struct SinfoField {
  std::string_view name;  // -O's
  char code;
  std::string_view header;
  SinfoMatch match;
};

using M = SinfoMatch;
// Slurm 22.05's src/sinfo/opts.c fmt_data and print.c titles.
constexpr SinfoField kFields[] = {
    {"AllocMem", kSiAllocMem, "ALLOCMEM", M::kNode},       {"AllocNodes", 'S', "ALLOCNODES", M::kNone},
    {"Available", 'a', "AVAIL", M::kPartition},            {"Cluster", 'V', "CLUSTER", M::kNone},
    {"Comment", kSiComment, "COMMENT", M::kNode},          {"Cores", 'Y', "CORES", M::kExact},
    {"CPUs", 'c', "CPUS", M::kExact},                      {"CPUsLoad", 'O', "CPU_LOAD", M::kExact},
    {"CPUsState", 'C', "CPUS(A/I/O/T)", M::kExact},        {"DefaultTime", 'L', "DEFAULTTIME", M::kPartition},
    {"Disk", 'd', "TMP_DISK", M::kExact},                  {"Extra", kSiExtra, "EXTRA", M::kNode},
    {"Features", 'f', "AVAIL_FEATURES", M::kNode},         {"features_act", 'b', "ACTIVE_FEATURES", M::kNode},
    {"FreeMem", 'e', "FREE_MEM", M::kExact},               {"Gres", 'G', "GRES", M::kNode},
    {"GresUsed", kSiGresUsed, "GRES_USED", M::kNode},      {"Groups", 'g', "GROUPS", M::kPartition},
    {"MaxCPUsPerNode", 'B', "MAX_CPUS_PER_NODE", M::kPartition}, {"Memory", 'm', "MEMORY", M::kExact},
    {"NodeAddr", 'o', "NODE_ADDR", M::kNode},              {"NodeAI", 'A', "NODES(A/I)", M::kNone},
    {"NodeAIOT", 'F', "NODES(A/I/O/T)", M::kNone},         {"NodeHost", 'n', "HOSTNAMES", M::kNode},
    {"NodeList", 'N', "NODELIST", M::kNone},               {"Nodes", 'D', "NODES", M::kNone},
    {"OverSubscribe", 'h', "OVERSUBSCRIBE", M::kPartition}, {"Partition", 'P', "PARTITION", M::kPartition},
    {"PartitionName", 'R', "PARTITION", M::kPartition},    {"Port", kSiPort, "PORT", M::kExact},
    {"PreemptMode", 'M', "PREEMPT_MODE", M::kPartition},   {"PriorityJobFactor", 'I', "PRIO_JOB_FACTOR", M::kPartition},
    {"PriorityTier", 'p', "PRIO_TIER", M::kPartition},     {"Reason", 'E', "REASON", M::kNode},
    {"Reservation", kSiReservation, "RESERVATION", M::kNode},         {"Root", 'r', "ROOT", M::kPartition},
    {"Share", 'h', "OVERSUBSCRIBE", M::kPartition},        {"Size", 's', "JOB_SIZE", M::kPartition},
    {"Sockets", 'X', "SOCKETS", M::kExact},                {"SocketCoreThread", 'z', "S:C:T", M::kExact},
    {"StateCompact", 't', "STATE", M::kNode},              {"StateComplete", kSiStateComplete, "STATECOMPLETE", M::kNode},
    {"StateLong", 'T', "STATE", M::kNode},                 {"Threads", 'Z', "THREADS", M::kExact},
    {"Time", 'l', "TIMELIMIT", M::kPartition},             {"TimeStamp", 'H', "TIMESTAMP", M::kNode},
    {"User", 'u', "USER", M::kNode},                       {"UserLong", 'U', "USER", M::kNode},
    {"Version", 'v', "VERSION", M::kExact},                {"Weight", 'w', "WEIGHT", M::kExact},
};

const SinfoField* field_of(char code) {
  for (const auto& f : kFields)
    if (f.code == code) return &f;
  return nullptr;
}

}  // namespace

std::string_view sinfo_header(char code) {
  const SinfoField* f = field_of(code);
  return f ? f->header : std::string_view{};
}

SinfoMatch sinfo_match(char code) {
  const SinfoField* f = field_of(code);
  return f ? f->match : SinfoMatch::kNone;
}

char sinfo_field_code(std::string_view name) {
  for (const auto& f : kFields)
    if (iequals(f.name, name)) return f.code;
  return 0;
}

ColumnFormat parse_sinfo_format(std::string_view text) {
  auto known = [](char c) { return field_of(c) != nullptr; };
  if (!iequals(text, "%all")) return parse_percent_format(text, known, "Invalid node format specification: ");
  std::string all;  // Slurm's expansion: a-z '|'-separated, then A-Z each followed by a space
  for (char c = 'a'; c <= 'z'; ++c)
    if (known(c)) all += std::string(all.empty() ? "" : "|") + "%" + c;
  for (char c = 'A'; c <= 'Z'; ++c)
    if (known(c)) all += std::string("|%") + c + " ";
  return parse_percent_format(all, known, "Invalid node format specification: ");
}

ColumnFormat parse_sinfo_fields(std::string_view text) {
  return parse_named_format(text, sinfo_field_code, "Invalid job format specification: ");
}

std::string_view sinfo_default_fields(const SinfoLayout& l) {
  if (l.summarize) return "partition:9 ,available:.5 ,time:.10 ,nodeaiot:.16 ,nodelist:0";
  if (l.node_oriented)
    return l.long_output ? "nodelist:0 ,nodes:.6 ,partition:.9 ,statelong:.11 ,cpus:4 ,socketcorethread:.8 ,memory:.6 "
                           ",disk:.8 ,weight:.6 ,features:.8 ,reason:20"
                         : "nodelist:0 ,nodes:.6 ,partition:.9 ,statecompact:6";
  if (l.reasons)
    return l.long_output ? "reason:20 ,userlong:12 ,timestamp:19 ,statecompact:6 ,nodelist:0"
                         : "reason:20 ,user:9 ,timestamp:19 ,nodelist:0";
  return l.long_output ? "partition:9 ,available:.5 ,time:.10 ,size:.10 ,root:.4 ,oversubscribe:.8 ,groups:.10 "
                         ",nodes:.6 ,statelong:.11 ,nodelist:0"
                       : "partition:9 ,available:.5 ,time:.10 ,nodes:.6 ,statecompact:.6 ,nodelist:0";
}

namespace {

// Slurm's suffix for a state word: "$" a MAINT reservation's node, before "*" not responding.
std::string suffix(const SinfoNodeState& s) {
  if (s.maint) return "$";
  if (s.no_respond) return "*";
  return "";
}

bool busy(const SinfoNodeState& s) { return s.base == NodeBase::kAllocated || s.base == NodeBase::kMixed; }

// A node in a MAINT reservation that is not drained, busy or down is "maint" (Slurm's
// node_state_string: its MAINT test comes before the base state's).
bool maint_word(const SinfoNodeState& s) { return s.maint && !s.drain && !busy(s) && s.base != NodeBase::kDown; }

}  // namespace

std::string sinfo_state_compact(const SinfoNodeState& s) {
  if (maint_word(s)) return s.no_respond ? "maint*" : "maint";
  if (s.drain) return (busy(s) ? "drng" : "drain") + suffix(s);
  switch (s.base) {
    case NodeBase::kDown: return "down" + suffix(s);
    case NodeBase::kIdle:
      return s.no_respond ? "idle*" : s.reserved ? "resv" : s.blocked ? "block" : s.planned ? "plnd" : "idle";
    case NodeBase::kAllocated: return "alloc" + suffix(s);
    case NodeBase::kMixed: return s.maint || s.no_respond ? "mix" + suffix(s) : s.planned ? "mix-" : "mix";
    case NodeBase::kUnknown: break;
  }
  return "unk" + std::string(s.no_respond ? "*" : "");
}

std::string sinfo_state_long(const SinfoNodeState& s) {
  if (maint_word(s)) return s.no_respond ? "maint*" : "maint";
  if (s.drain) return (busy(s) ? "draining" : "drained") + suffix(s);
  switch (s.base) {
    case NodeBase::kDown: return "down" + suffix(s);
    case NodeBase::kIdle:
      return s.no_respond ? "idle*" : s.reserved ? "reserved" : s.blocked ? "blocked" : s.planned ? "planned" : "idle";
    case NodeBase::kAllocated: return "allocated" + suffix(s);
    case NodeBase::kMixed: return s.maint || s.no_respond ? "mixed" + suffix(s) : s.planned ? "mixed-" : "mixed";
    case NodeBase::kUnknown: break;
  }
  return "unknown" + std::string(s.no_respond ? "*" : "");
}

uint32_t sinfo_state_number(const SinfoNodeState& s) {  // Slurm's NODE_STATE_* bits
  return static_cast<uint32_t>(s.base) | (s.drain ? 0x200u : 0u) | (s.no_respond ? 0x800u : 0u) |
         (s.planned ? 0x80000000u : 0u) | (s.reserved ? 0x20u : 0u) | (s.maint ? 0x8000u : 0u) |
         (s.blocked ? 0x8000000u : 0u);
}

namespace {

constexpr std::string_view kValidStates =
    "unknown,down,idle,allocated,?,mixed,future,drain,drained,draining,no_respond,reserved,perfctrs,cloud,"
    "completing,powering_down,powered_down,power_down,powering_up,fail,maint,reboot,reboot^,unknown";

bool prefix_of(std::string_view given, std::string_view name) {
  return given.size() <= name.size() && iequals(given, name.substr(0, given.size()));
}

// One state name as Slurm's _node_state_id takes it: a prefix of a base state's compact or
// long name (in Slurm's order), then the DRAIN family, then the flags.
bool state_term(std::string_view name, SinfoStateFilter::Term& t) {
  using K = SinfoStateFilter::Kind;
  struct Base { std::string_view compact, full; K kind; NodeBase base; };
  static constexpr Base kBases[] = {
      {"UNK", "UNKNOWN", K::kBase, NodeBase::kUnknown}, {"DOWN", "DOWN", K::kBase, NodeBase::kDown},
      {"IDLE", "IDLE", K::kBase, NodeBase::kIdle},      {"ALLOC", "ALLOCATED", K::kAllocated, NodeBase::kAllocated},
      {"ERROR", "ERROR", K::kNever, NodeBase::kUnknown}, {"MIX", "MIXED", K::kBase, NodeBase::kMixed},
      {"FUTR", "FUTURE", K::kNever, NodeBase::kUnknown}};
  for (const auto& b : kBases)
    if (prefix_of(name, b.compact) || prefix_of(name, b.full)) {
      t.kind = b.kind;
      t.base = b.base;
      return true;
    }
  if (prefix_of(name, "DRAIN")) return t.kind = K::kDrain, true;
  if (prefix_of(name, "DRAINED")) return t.kind = K::kDrained, true;
  if (prefix_of(name, "DRAINING") || prefix_of(name, "DRNG")) return t.kind = K::kDraining, true;
  if (prefix_of(name, "NO_RESPOND") || prefix_of(name, "NOT_RESPONDING")) return t.kind = K::kNoRespond, true;
  if (prefix_of(name, "PLANNED") || prefix_of(name, "PLND")) return t.kind = K::kPlanned, true;
  if (prefix_of(name, "BLOCKED")) return t.kind = K::kBlocked, true;
  for (std::string_view never : split(kValidStates, ','))  // Slurm's, never true of an hq node
    if (iequals(name, never)) return t.kind = K::kNever, true;
  return false;
}

}  // namespace

Result<SinfoStateFilter> parse_sinfo_states(std::string_view text) {
  SinfoStateFilter out;
  if (iequals(text, "all")) {
    out.terms.push_back({});
    return out;
  }
  out.all_of = text.find_first_of("&+") != std::string_view::npos;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find_first_of(",&+", pos);
    std::string_view name = text.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
    pos = end == std::string_view::npos ? text.size() : end + 1;
    if (name.empty()) continue;
    SinfoStateFilter::Term t;
    if (!state_term(name, t))
      return invalid("Bad state string: \"" + std::string(name) + "\"\nvalid states: " + std::string(kValidStates));
    out.terms.push_back(t);
  }
  if (out.terms.empty()) return invalid("Bad state string: \"" + std::string(text) + "\"\nvalid states: " + std::string(kValidStates));
  return out;
}

bool sinfo_state_matches(const SinfoStateFilter& f, const SinfoNodeState& s, int32_t alloc_cpus) {
  using K = SinfoStateFilter::Kind;
  auto one = [&](const SinfoStateFilter::Term& t) {
    switch (t.kind) {
      case K::kAll: return true;
      case K::kBase: return s.base == t.base;
      case K::kAllocated: return alloc_cpus > 0;
      case K::kDrain: return s.drain;
      case K::kDrained: return s.drain && !busy(s);
      case K::kDraining: return s.drain && busy(s);
      case K::kNoRespond: return s.no_respond;
      case K::kPlanned: return s.planned;
      case K::kBlocked: return s.blocked;
      case K::kNever: return false;
    }
    return false;
  };
  bool match = false;
  for (const auto& t : f.terms) {  // Slurm's loop: stops at the first decisive term
    match = one(t);
    if (!f.all_of && match) break;
    if (f.all_of && !match) break;
  }
  return match;
}

}  // namespace hq
