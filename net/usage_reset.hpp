// PriorityUsageResetPeriod's boundaries in the local zone (Slurm's: midnight; Sunday at
// midnight; the 1st of the month, of the quarter, of January at midnight). Outside core/
// because it reads the zone's rules (localtime_r, mktime).
#pragma once
#include <ctime>

#include "core/sched_config.hpp"
#include "core/time.hpp"

namespace hq::net {

// The last boundary of `period` at or before `now`; 0 for kNone.
inline Time usage_reset_at(UsageReset period, Time now) {
  if (period == UsageReset::kNone) return 0;
  time_t tt = static_cast<time_t>(now);
  struct tm tm {};
  if (!localtime_r(&tt, &tm)) return 0;
  tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
  tm.tm_isdst = -1;  // midnight's own offset, whatever now's is
  switch (period) {
    case UsageReset::kWeekly: tm.tm_mday -= tm.tm_wday; break;  // back to Sunday (mktime normalises)
    case UsageReset::kMonthly: tm.tm_mday = 1; break;
    case UsageReset::kQuarterly: tm.tm_mday = 1, tm.tm_mon -= tm.tm_mon % 3; break;
    case UsageReset::kYearly: tm.tm_mday = 1, tm.tm_mon = 0; break;
    default: break;
  }
  time_t at = mktime(&tm);
  return at < 0 ? 0 : static_cast<Time>(at);
}

}  // namespace hq::net
