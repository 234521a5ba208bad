// sinfo's -o/--format and -O/--Format (core/column_format): the fields sinfo knows, as
// Slurm 22.05 names them (letters, -O names, column titles, and which of them split
// rows), its default layouts, and -t/--states as it reads them. Pure; thread-safe.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/column_format.hpp"
#include "core/status.hpp"

namespace hq {

// Codes of the -O fields Slurm has no letter for.
inline constexpr char kSiAllocMem = '1', kSiComment = '2', kSiExtra = '3', kSiPort = '4', kSiStateComplete = '5',
                      kSiGresUsed = '6', kSiReservation = '7';

// How a field takes part in sinfo's grouping of nodes into rows.
enum class SinfoMatch {
  kNone,       // shown for the row as a whole (NODES, NODELIST, CPUS(A/I/O/T), ...)
  kPartition,  // rows are per partition attribute (PARTITION, TIMELIMIT, AVAIL, ...)
  kNode,       // nodes with another value are another row (STATE, REASON, GRES, ...)
  kExact,      // with -e only: another row (CPUS, MEMORY, ...); else shown as "min+"
};

std::string_view sinfo_header(char code);   // "" for one sinfo does not know
SinfoMatch sinfo_match(char code);
char sinfo_field_code(std::string_view name);  // -O name in any case; 0 for none

// -o: "%all" is every field ("|"-separated), as Slurm's.
ColumnFormat parse_sinfo_format(std::string_view text);
ColumnFormat parse_sinfo_fields(std::string_view text);  // -O

// The layouts sinfo picks without -o/-O (Slurm 22.05's, in -O form).
struct SinfoLayout {
  bool summarize = false, node_oriented = false, reasons = false, long_output = false;
};
std::string_view sinfo_default_fields(const SinfoLayout& layout);

// A node's state as sinfo sees it: Slurm's base state and the flags hq's nodes can have.
enum class NodeBase : uint8_t { kUnknown = 0, kDown = 1, kIdle = 2, kAllocated = 3, kMixed = 5 };
struct SinfoNodeState {
  NodeBase base = NodeBase::kUnknown;
  bool drain = false, no_respond = false, planned = false;
  bool reserved = false, maint = false;  // in an active advance reservation (MAINT: maint)
  bool blocked = false;                  // kept for an --exclusive=topo job (Slurm's BLOCKED)
};
std::string sinfo_state_compact(const SinfoNodeState& s);  // "idle", "drain*", "mix-", ...
std::string sinfo_state_long(const SinfoNodeState& s);     // "idle", "drained*", "mixed-", ...
uint32_t sinfo_state_number(const SinfoNodeState& s);      // Slurm's node_state, for -S t

// -t/--states: Slurm's state names and prefixes in any case, "," for any of, "&" or "+"
// for all of; "all" alone. An unknown name: Slurm's two lines.
struct SinfoStateFilter {
  enum class Kind { kAll, kBase, kAllocated, kDrain, kDrained, kDraining, kNoRespond, kPlanned, kBlocked, kNever };
  struct Term {
    Kind kind = Kind::kAll;
    NodeBase base = NodeBase::kUnknown;
  };
  std::vector<Term> terms;
  bool all_of = false;
};
Result<SinfoStateFilter> parse_sinfo_states(std::string_view text);
// Whether a node in state `s` with `alloc_cpus` in use passes the filter.
bool sinfo_state_matches(const SinfoStateFilter& f, const SinfoNodeState& s, int32_t alloc_cpus);

}  // namespace hq
