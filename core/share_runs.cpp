#include "core/share_runs.hpp"

#include <algorithm>

#include "core/acct_policy.hpp"

namespace hq {

std::vector<TresCounts> running_tres_seconds(const FairShare& fs, const ClusterState& s, Time now) {
  std::vector<TresCounts> run(fs.rows().size(), TresCounts{});
  for_each_job_in(s, s.running, [&](const Job& j) {
    int64_t seconds = j.time_limit == kUnlimited ? 4294967295LL * 60 - (now - j.start_time)
                                                 : std::max<int64_t>(0, limit_end(j) - now);
    TresCounts t = held_tres(j);
    for (int32_t at : fs.path(j.spec.user, j.spec.account, j.partition))
      for (int k = 0; k < kTresKinds; ++k) {
        int64_t& sum = run[static_cast<size_t>(at)][k];
        sum = sat_add(sum, sat_mul(t[k], seconds));  // a huge unlimited job must not wrap
      }
  });
  return run;
}

std::string tres_run_mins_text(const TresCounts& seconds) {
  auto mins = [&](TresKind k) { return std::to_string(seconds[k] / 60); };
  return "cpu=" + mins(kTresCpu) + ",mem=" + mins(kTresMem) + ",energy=0,node=" + mins(kTresNode) +
         ",billing=" + mins(kTresBilling) + ",fs/disk=0,vmem=0,pages=0";
}

}  // namespace hq
