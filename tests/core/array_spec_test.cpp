// sbatch --array forms (reference §8.4): lists, ranges, steps, throttles, MaxArraySize.
#include <doctest/doctest.h>

#include "core/array_spec.hpp"

using namespace hq;

TEST_CASE("parse_array: lists, ranges and steps, sorted and unique") {
  auto a = parse_array("0-15:4", 1001);
  REQUIRE(a.is_ok());
  CHECK(a->indices == std::vector<int32_t>{0, 4, 8, 12});
  CHECK(a->step == 4);
  CHECK(a->throttle == 0);

  auto b = parse_array("8,1,3,3", 1001);
  REQUIRE(b.is_ok());
  CHECK(b->indices == std::vector<int32_t>{1, 3, 8});
  CHECK(b->step == 1);  // a list without ':' has step 1, as Slurm sets SLURM_ARRAY_TASK_STEP

  auto c = parse_array("0-20:4,7,30-40:5%3", 1001);  // the first step given, as Slurm
  REQUIRE(c.is_ok());
  CHECK(c->indices == std::vector<int32_t>{0, 4, 7, 8, 12, 16, 20, 30, 35, 40});
  CHECK(c->step == 4);
  CHECK(c->throttle == 3);
}

TEST_CASE("parse_array: MaxArraySize bounds the indices - bad forms are named") {
  CHECK(parse_array("0-1000", 1001).is_ok());
  auto big = parse_array("0-1001", 1001);
  REQUIRE_FALSE(big.is_ok());
  CHECK(big.status().message().find("MaxArraySize (1001)") != std::string::npos);
  CHECK(parse_array("1-2000", 4000001).is_ok());  // a site that raised it takes large arrays
  for (const char* bad : {"", "%2", "5-1", "a-b", "1-3:0", "-1", "1,,2", "1-3%x"}) {
    INFO(bad);
    auto r = parse_array(bad, 1001);
    REQUIRE_FALSE(r.is_ok());
    CHECK(r.status().message().find("Invalid job array specification") != std::string::npos);
  }
}

TEST_CASE("format_array_indices: runs and lists as Slurm prints them, with the throttle") {
  CHECK(format_array_indices({1, 2, 3, 4}, 2) == "1-4%2");
  CHECK(format_array_indices({1, 3, 8}) == "1,3,8");
  CHECK(format_array_indices({0, 5, 10}) == "0,5,10");
  CHECK(format_array_indices({1, 2, 7, 9, 10}) == "1-2,7,9-10");
  CHECK(format_array_indices({5}) == "5");
  CHECK(format_array_indices({}) == "");
}

TEST_CASE("format_array_indices: Slurm's step form, only where xlate_array_task_str uses it") {
  auto stepped = [](int32_t lo, int32_t hi, int32_t step) {
    std::vector<int32_t> out;
    for (int32_t i = lo; i <= hi; i += step) out.push_back(i);
    return out;
  };
  // As Slurm 22.05 printed them for --array=0-30:3%4, 0-20:4%2, 0-15:3, 1-9:2, 0-12:4, 0-10:2, 0-24:2,30.
  CHECK(format_array_indices(stepped(0, 30, 3), 4) == "0-30:3%4");
  CHECK(format_array_indices(stepped(0, 20, 4), 2) == "0-20:4%2");
  CHECK(format_array_indices(stepped(0, 15, 3)) == "0-15:3");
  CHECK(format_array_indices(stepped(1, 9, 2)) == "1,3,5,7,9");    // span 8
  CHECK(format_array_indices(stepped(0, 12, 4)) == "0,4,8,12");     // 4 tasks
  CHECK(format_array_indices(stepped(0, 10, 2)) == "0,2,4,6,8,10");  // span 10, not over
  auto uneven = stepped(0, 24, 2);
  uneven.push_back(30);
  CHECK(format_array_indices(uneven) == "0,2,4,6,8,10,12,14,16,18,20,22,24,30");
  CHECK(format_array_indices(stepped(1, 100, 1)) == "1-100");  // the neighbour is there: runs
}
