// sprio's output, as Slurm 22.05 prints it: the default columns (those whose weight is not
// 0), -l, -n (normalised factors), -w (the weights), -u (a USER column), -o with Slurm's
// letters (%i %r %u %Y %y %S %A %a %B %b %F %f %J %j %P %p %Q %q %N %T %t %c), where "%.N" is
// right-justified and "%N" left-justified and cut, and "Unable to find jobs matching
// user/id(s) specified" for -j that finds nothing. Pure; thread-safe.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.hpp"

namespace hq {

// One pending job's priority: the factors 0..1 and the total the scheduler uses.
struct SprioJob {
  uint64_t id = 0;
  std::string partition, user, cluster;
  double age = 0, fairshare = 0, job_size = 0, partition_factor = 0, qos = 0;
  int64_t nice = 0, total = 0;
};

struct SprioWeights {
  int64_t age = 0, assoc = 0, fairshare = 0, job_size = 0, partition = 0, qos = 0;
};

struct SprioOptions {
  bool long_list = false, normalized = false, weights = false, noheader = false;
  bool user_column = false;  // -u was given
  bool jobs_given = false;   // -j was given (none found: Slurm's message)
  std::string format;        // -o / SPRIO_FORMAT; "" the default for the options
};

// `jobs` in job id order. Errors: an unknown format letter.
Result<std::string> render_sprio(const std::vector<SprioJob>& jobs, const SprioWeights& w, const SprioOptions& opt);

}  // namespace hq
