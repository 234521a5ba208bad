#include "core/job_filter.hpp"

#include <algorithm>
#include <cctype>

#include "core/units.hpp"

namespace hq {
namespace {

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

constexpr char kValidStates[] =
    "PENDING,RUNNING,SUSPENDED,COMPLETED,CANCELLED,FAILED,TIMEOUT,NODE_FAIL,PREEMPTED,BOOT_FAIL,DEADLINE,"
    "OUT_OF_MEMORY,COMPLETING,CONFIGURING,RESIZING,RESV_DEL_HOLD,REQUEUED,REQUEUE_FED,REQUEUE_HOLD,REVOKED,"
    "SIGNALING,SPECIAL_EXIT,STAGE_OUT,STOPPED";

// Slurm's states hq's jobs are never in: taken (they match nothing), as squeue takes them.
bool slurm_only_state(const std::string& s) {
  static const std::set<std::string> kOthers = {
      "BOOT_FAIL", "BF", "COMPLETING", "CG", "CONFIGURING", "CF",
      "RESIZING", "RS", "RESV_DEL_HOLD", "RD", "REQUEUED", "RQ", "REQUEUE_FED", "RF", "REQUEUE_HOLD", "RH",
      "REVOKED", "RV", "SIGNALING", "SI", "SPECIAL_EXIT", "SE", "STAGE_OUT", "SO", "STOPPED", "ST"};
  return kOthers.count(s) > 0;
}

// Whether any item of a comma list ("a,b") is in `names`; allocates nothing (a listing
// asks this of every job).
bool any_item_in(std::string_view list, const JobFilter::Names& names) {
  while (true) {
    size_t comma = list.find(',');
    if (names.count(list.substr(0, comma))) return true;
    if (comma == std::string_view::npos) return false;
    list.remove_prefix(comma + 1);
  }
}

bool state_matches(const JobFilter& f, const Job& job) {
  if (!f.states_given) return !is_terminal(job.state);
  return job.suspended ? f.suspended : f.states.count(job.state) > 0;
}

}  // namespace

Status parse_state_filter(std::string_view text, JobFilter& filter) {
  if (upper(text) == "ALL") {
    filter.all_states = true;
    return Status::ok();
  }
  filter.states_given = true;
  for (std::string_view item : split(text, ',')) {
    std::string s = upper(item);
    if (s.empty()) continue;
    if (s == "OOM") s = "OUT_OF_MEMORY";
    if (s == "SUSPENDED" || s == "S") {
      filter.suspended = true;
      continue;
    }
    JobState st;
    if (parse_job_state(s, st)) {
      filter.states.insert(st);
      continue;
    }
    bool found = false;
    for (JobState each : {JobState::kPending, JobState::kRunning, JobState::kCompleted, JobState::kCancelled,
                          JobState::kFailed, JobState::kTimeout, JobState::kNodeFail, JobState::kOutOfMemory,
                          JobState::kPreempted, JobState::kDeadline})
      if (job_state_code(each) == s) {
        filter.states.insert(each);
        found = true;
      }
    if (found || slurm_only_state(s)) continue;
    return invalid("Invalid job state specified: " + std::string(item) + "\nValid job states include: " + kValidStates);
  }
  return Status::ok();
}

ListingKey listing_key(const Job& job) {
  return ListingKey{job.spec.partition, job.partition, job.spec.account,
                    job.spec.extra->qos, job.spec.extra->reservation, job.spec.extra->wckey};
}

bool filter_reads_key(const JobFilter& f) {
  return !f.partitions.empty() || !f.accounts.empty() || !f.qos.empty() || !f.reservations.empty() ||
         !f.wckeys.empty();
}

bool key_matches(const JobFilter& f, const ListingKey& key) {
  if (!f.accounts.empty() && !f.accounts.count(key.account)) return false;
  // A pending job of a QOS list (--qos a,b) matches each of them.
  if (!f.qos.empty() && !any_item_in(key.qos, f.qos)) return false;
  if (!f.reservations.empty() && !f.reservations.count(key.reservation)) return false;
  if (!f.wckeys.empty() && !f.wckeys.count(key.wckey)) return false;
  if (!f.partitions.empty() &&
      !any_item_in(key.spec_partition.empty() ? key.partition : key.spec_partition, f.partitions) &&
      !f.partitions.count(key.partition))
    return false;
  return true;
}

bool job_matches(const JobFilter& f, const Job& job) {
  if (!f.all_states && !state_matches(f, job)) return false;
  if (!f.users.empty() && !f.users.count(job.spec.user)) return false;
  if (!f.names.empty() && !f.names.count(job.spec.name)) return false;
  if (f.licenses_given) return false;
  if (!f.nodes.empty() && std::none_of(job.alloc.begin(), job.alloc.end(),
                                       [&](const NodeAlloc& a) { return f.nodes.count(a.node) > 0; }))
    return false;
  return !filter_reads_key(f) || key_matches(f, listing_key(job));
}

}  // namespace hq
