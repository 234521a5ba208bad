// PriorityUsageResetPeriod's boundaries (net/usage_reset.hpp), in a fixed zone.
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

#include "net/usage_reset.hpp"

using namespace hq;

namespace {

// Sets TZ for one test and puts the old value back.
class ZoneFor {
 public:
  explicit ZoneFor(const char* tz) {
    if (const char* old = std::getenv("TZ")) old_ = old, had_ = true;
    setenv("TZ", tz, 1);
    tzset();
  }
  ~ZoneFor() {
    if (had_) setenv("TZ", old_.c_str(), 1);
    else unsetenv("TZ");
    tzset();
  }

 private:
  std::string old_;
  bool had_ = false;
};

}  // namespace

TEST_CASE("usage reset boundaries: midnight, Sunday, the 1st of the month, quarter and year, in the local zone") {
  ZoneFor utc("UTC0");
  const Time now = 1795601045;  // Wednesday 2026-11-25 10:04:05 UTC
  CHECK(net::usage_reset_at(UsageReset::kNone, now) == 0);
  CHECK(net::usage_reset_at(UsageReset::kDaily, now) == 1795564800);      // 2026-11-25 00:00
  CHECK(net::usage_reset_at(UsageReset::kWeekly, now) == 1795305600);     // Sunday 2026-11-22
  CHECK(net::usage_reset_at(UsageReset::kMonthly, now) == 1793491200);    // 2026-11-01
  CHECK(net::usage_reset_at(UsageReset::kQuarterly, now) == 1790812800);  // 2026-10-01
  CHECK(net::usage_reset_at(UsageReset::kYearly, now) == 1767225600);     // 2026-01-01
  // At a boundary itself: that boundary.
  CHECK(net::usage_reset_at(UsageReset::kDaily, 1795564800) == 1795564800);
  ZoneFor east("XYZ-2");  // two hours ahead of UTC: local midnight is 22:00 UTC the day before
  CHECK(net::usage_reset_at(UsageReset::kDaily, now) == 1795564800 - 2 * 3600);
}
