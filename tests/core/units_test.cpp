#include <doctest/doctest.h>

#include "core/units.hpp"

using namespace hq;

TEST_CASE("durations: Slurm time forms") {
  CHECK(*parse_duration("90") == 90 * 60);
  CHECK(*parse_duration("5:30") == 5 * 60 + 30);
  CHECK(*parse_duration("1:02:03") == 3723);
  CHECK(*parse_duration("2-0") == 2 * 86400);
  CHECK(*parse_duration("1-02:03") == 86400 + 2 * 3600 + 3 * 60);
  CHECK(*parse_duration("1-02:03:04") == 86400 + 7384);
  CHECK(*parse_duration("UNLIMITED") == kUnlimited);
  CHECK(*parse_duration("infinite") == kUnlimited);
  CHECK(*parse_duration("0") == kUnlimited);
  CHECK(*parse_duration("30s") == 30);
  CHECK(*parse_duration("5m") == 300);
  CHECK(*parse_duration("2h") == 7200);
  CHECK(*parse_duration("1d") == 86400);
  for (const char* bad : {"", "abc", "1:2:3:4", "-5", "1-", "x-1", "5q", "1:-1"})
    CHECK_MESSAGE(!parse_duration(bad).is_ok(), bad);
}

TEST_CASE("time limits: whole minutes as Slurm's time_str2mins, a seconds part rounds up") {
  CHECK(*parse_time_limit("5") == 5 * 60);
  CHECK(*parse_time_limit("0:05") == 60);      // Slurm: TimeLimit=00:01:00
  CHECK(*parse_time_limit("1:30") == 2 * 60);  // minutes:seconds
  CHECK(*parse_time_limit("1:00") == 60);
  CHECK(*parse_time_limit("1:02:03") == 63 * 60);
  CHECK(*parse_time_limit("1:02:00") == 62 * 60);
  CHECK(*parse_time_limit("1-0:0:1") == 86400 + 60);
  CHECK(*parse_time_limit("2-0") == 2 * 86400);
  CHECK(*parse_time_limit("0:0") == kUnlimited);  // zero minutes: no limit
  CHECK(*parse_time_limit("0") == kUnlimited);
  CHECK(*parse_time_limit("-1") == kUnlimited);
  CHECK(*parse_time_limit("Infinite") == kUnlimited);
  CHECK(*parse_time_limit("30s") == 30);  // hq's own unit forms keep their seconds
  CHECK(*parse_time_limit("5m") == 300);
  for (const char* bad : {"", "abc", "1:2:3:4", "-5", "5q"}) CHECK_MESSAGE(!parse_time_limit(bad).is_ok(), bad);
  CHECK(*parse_duration("0:05") == 5);  // other durations keep seconds
}

TEST_CASE("durations: formatting") {
  CHECK(format_limit(kUnlimited) == "UNLIMITED");
  CHECK(format_limit(3723) == "01:02:03");
  CHECK(format_limit(2 * 86400 + 5) == "2-00:00:05");
  CHECK(format_elapsed(0) == "0:00");
  CHECK(format_elapsed(75) == "1:15");
  CHECK(format_elapsed(3723) == "1:02:03");
  CHECK(format_elapsed(86400 + 60) == "1-00:01:00");
  CHECK(format_timestamp(0) == "1970-01-01T00:00:00");
  CHECK(format_timestamp(1795000000) == "2026-11-18T11:06:40");
}

TEST_CASE("sizes in MiB") {
  CHECK(*parse_size_mib("512") == 512);
  CHECK(*parse_size_mib("4G") == 4096);
  CHECK(*parse_size_mib("4gb") == 4096);
  CHECK(*parse_size_mib("1T") == 1024 * 1024);
  CHECK(*parse_size_mib("100K") == 1);  // rounds up
  CHECK(*parse_size_mib("2048k") == 2);
  for (const char* bad : {"", "G", "4X", "-1", "1.5G", "99999999999999999999"})
    CHECK_MESSAGE(!parse_size_mib(bad).is_ok(), bad);
}

TEST_CASE("format_size_mib: the largest unit that divides exactly, as Slurm prints memory") {
  CHECK(format_size_mib(0) == "0");
  CHECK(format_size_mib(1000) == "1000M");
  CHECK(format_size_mib(4096) == "4G");
  CHECK(format_size_mib(1536) == "1536M");
  CHECK(format_size_mib(2 * 1024 * 1024) == "2T");
  CHECK(format_size_mib(int64_t{3} << 30) == "3P");
}
