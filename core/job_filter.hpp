// Which jobs a listing shows (squeue's -t, -u, -p, -n, -A, -q, -w, -L): parsed as Slurm 22.05 parses
// them and applied in the controller, so a page of the reply holds only what was asked for.
// Pure; thread-safe.
#pragma once
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/job.hpp"
#include "core/status.hpp"

namespace hq {

struct JobFilter {
  bool states_given = false;      // -t: only jobs in `states`; else those that have not ended
  std::set<JobState> states;      // (Slurm's states hq never uses match nothing)
  bool suspended = false;         // -t SUSPENDED/S (a suspended job is kRunning; R alone does not take it)
  bool all_states = false;        // -t all
  using Names = std::set<std::string, std::less<>>;  // looked up by string_view: no copy a job
  Names users, partitions, names, accounts, qos;    // empty: any
  Names reservations, wckeys;                       // -R, --wckey; empty: any
  Names nodes;                    // -w: jobs holding any of these nodes (not pending ones)
  bool licenses_given = false;    // -L: jobs using these licenses; hq tracks none, so none
};

// squeue -t: "all" alone, or a comma list of state names or codes in any case ("pending",
// "PD", "r,cd", "OOM"). An unknown one: kInvalid with Slurm's two lines ("Invalid job state
// specified: X" and the valid ones).
Status parse_state_filter(std::string_view text, JobFilter& filter);

// Whether `job` is one `filter` lets through.
bool job_matches(const JobFilter& filter, const Job& job);

// What -p, -A, -q, -R and --wckey read of a job: jobs alike in all of these pass those
// filters together, so an index that numbers each distinct key (core/job_list) decides
// them once a key, not once a job. Views into the job's strings.
struct ListingKey {
  std::string_view spec_partition;  // as asked (a comma list where several)
  std::string_view partition;       // the one it runs or waits in
  std::string_view account, qos, reservation, wckey;
  friend bool operator==(const ListingKey&, const ListingKey&) = default;
};
ListingKey listing_key(const Job& job);
// Whether a job of this key passes -p, -A, -q, -R and --wckey (none given: true).
bool key_matches(const JobFilter& filter, const ListingKey& key);
// Whether `filter` has any of them.
bool filter_reads_key(const JobFilter& filter);

}  // namespace hq
