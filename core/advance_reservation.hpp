// Advance reservations (scontrol create reservation): whole nodes held for some users and
// accounts over a time window. Reads scontrol's Key=Value settings as Slurm 22.05 does,
// decides a new or changed reservation against the cluster state (its name, its nodes, and
// whether they are busy then), and prints `scontrol show reservation` and `sinfo -T`.
// The scheduler keeps other jobs off a reservation's nodes over its window and runs the
// jobs that name it only there (core/scheduler.cpp). Pure; thread-safe.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.hpp"
#include "core/time.hpp"

namespace hq {

struct ClusterState;

// The flags hq acts on, as Slurm spells them. SPEC_NODES and ALL_NODES are set by hq
// (Nodes= given, Nodes=ALL), as Slurm does; the others by the administrator.
enum ResvFlag : uint32_t {
  kResvMaint = 1u << 0,       // MAINT: nodes show "maint"; jobs kept off say "Reserved for maintenance"
  kResvOverlap = 1u << 1,     // OVERLAP: may share nodes and time with other reservations
  kResvIgnoreJobs = 1u << 2,  // IGNORE_JOBS: created even where jobs run then
  kResvSpecNodes = 1u << 3,
  kResvAllNodes = 1u << 4,
};

struct AdvanceReservation {
  std::string name;
  uint64_t id = 0;                    // Slurm's ResvId: names made up as USER_ID
  Time start = 0, end = 0;            // [start, end)
  std::vector<std::string> nodes;     // natural order
  std::vector<std::string> users, accounts;
  std::string partition;              // as given ("" none)
  uint32_t flags = 0;
  bool operator==(const AdvanceReservation&) const = default;

  bool active(Time now) const { return start <= now && now < end; }
  // Whether [from, to) meets its window (to <= from: no end).
  bool overlaps(Time from, Time to) const { return start < end && from < end && (to <= from || start < to); }
  bool holds(std::string_view node) const;
  // Whether a job of this user and account may run in it.
  bool admits(std::string_view user, std::string_view account) const;
};

// What `scontrol create|update reservation` was given; each set only when given.
struct ResvSettings {
  std::optional<std::string> name, partition, nodes;  // nodes: a hostlist or ALL
  std::optional<Time> start, end;
  std::optional<Duration> duration;                   // kUnlimited: UNLIMITED
  std::optional<int32_t> node_count;
  std::optional<std::vector<std::string>> users, accounts;
  std::optional<uint32_t> flags;
};

// Reads Key=Value words as scontrol does (keys in any case and abbreviated as Slurm allows;
// times as --begin takes them, in the caller's `utc_offset`). Errors are scontrol's, without
// its "scontrol: error: " and ".  No reservation created." ("Unknown parameter foo=bar").
Result<ResvSettings> parse_resv_settings(const std::vector<std::string>& words, Time now, int64_t utc_offset);

// What scontrol itself checks before it asks for a new reservation (same error form).
Status check_resv_create(const ResvSettings& s);

// A new reservation from `s` against the state at `now`: its name (given, or the first
// account's or user's name with `id`), window, partition and nodes (Nodes=, ALL, or NodeCnt
// free ones). Errors are slurmctld's: "Duplicate reservation name", "Invalid node name
// specified", "Requested nodes are busy" (jobs run there then, or another reservation holds
// them), "Invalid partition name specified".
Result<AdvanceReservation> create_reservation(const ClusterState& state, const ResvSettings& s, Time now, uint64_t id);
// `current` with `s` applied (ReservationName picks it; the rest changes it), checked as a
// new one is, against the others.
Result<AdvanceReservation> update_reservation(const ClusterState& state, const AdvanceReservation& current,
                                              const ResvSettings& s, Time now);
// Whether a pending or running job names it (slurmctld then refuses to delete it).
bool reservation_in_use(const ClusterState& state, std::string_view name);

// "MAINT,SPEC_NODES", as Slurm orders them; "" none.
std::string resv_flags_string(uint32_t flags);

// scontrol show reservation: one record (four continuation lines and a blank one, or one
// line with `one_liner`). `cpus`: the CPUs of its nodes (CoreCnt, TRES).
std::string format_reservation(const AdvanceReservation& r, Time now, int64_t cpus, bool one_liner);
// sinfo -T: the table of every reservation, or "No reservations in the system".
std::string format_reservation_table(const std::vector<AdvanceReservation>& list, Time now, bool header);

}  // namespace hq
