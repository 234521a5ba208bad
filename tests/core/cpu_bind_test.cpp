// --cpu-bind as Slurm spells it (modifiers, singular words, map_cpu and mask_cpu lists),
// and where each task of a step is bound within the step's CPUs on its node.
#include <doctest/doctest.h>

#include "core/cpu_bind.hpp"

using namespace hq;

TEST_CASE("cpu bind: Slurm's words, modifiers and lists - anything else named in Slurm's error") {
  CHECK(parse_cpu_bind("")->kind == CpuBindKind::kDefault);
  CHECK(parse_cpu_bind("verbose")->verbose);
  CHECK(parse_cpu_bind("verbose")->kind == CpuBindKind::kDefault);
  auto vc = parse_cpu_bind("verbose,cores");
  REQUIRE(vc.is_ok());
  CHECK(vc->verbose);
  CHECK(vc->kind == CpuBindKind::kCores);
  CHECK(parse_cpu_bind("core,quiet")->kind == CpuBindKind::kCores);
  CHECK(parse_cpu_bind("THREADS")->kind == CpuBindKind::kThreads);
  CHECK(parse_cpu_bind("socket")->kind == CpuBindKind::kSockets);
  CHECK(parse_cpu_bind("rank")->kind == CpuBindKind::kRank);
  auto map = parse_cpu_bind("q,map_cpu:3,1");  // the list's commas stay with it
  REQUIRE(map.is_ok());
  CHECK(map->kind == CpuBindKind::kMap);
  CHECK(map->map == std::vector<int32_t>{3, 1});
  auto mask = parse_cpu_bind("mask_cpu:0x3,0xc");
  REQUIRE(mask.is_ok());
  CHECK(mask->masks == std::vector<std::vector<int32_t>>{{0, 1}, {2, 3}});
  auto bad = parse_cpu_bind("numa");
  REQUIRE_FALSE(bad.is_ok());
  CHECK(bad.status().message() == "unrecognized --cpu-bind argument \"numa\"");
  CHECK(parse_cpu_bind("map_cpu:").status().message() == "missing list for \"--cpu-bind=map_cpu:<list>\"");
  CHECK_FALSE(parse_cpu_bind("mask_cpu:0xz").is_ok());
  CHECK_FALSE(parse_cpu_bind("mask_cpu:0x0").is_ok());
}

TEST_CASE("cpu bind: a step's tasks - the step's CPUs by default, cores per task in order, rank, map and mask within them") {
  std::vector<int32_t> step{2, 3, 6, 7};
  CHECK(task_affinity(*parse_cpu_bind(""), step, 1, 1).value() == step);
  CHECK(task_affinity(*parse_cpu_bind("sockets"), step, 0, 1).value() == step);
  CHECK(task_affinity(*parse_cpu_bind("none"), step, 0, 1)->empty());
  auto cores = *parse_cpu_bind("cores");
  CHECK(task_affinity(cores, step, 0, 1).value() == std::vector<int32_t>{2});
  CHECK(task_affinity(cores, step, 3, 1).value() == std::vector<int32_t>{7});
  CHECK(task_affinity(cores, step, 4, 1).value() == std::vector<int32_t>{2});  // more tasks than CPUs: round again
  CHECK(task_affinity(cores, step, 1, 2).value() == std::vector<int32_t>{6, 7});  // -c2: two each
  CHECK(task_affinity(*parse_cpu_bind("rank"), step, 2, 1).value() == std::vector<int32_t>{6});
  CHECK(task_affinity(*parse_cpu_bind("map_cpu:7,2"), step, 1, 1).value() == std::vector<int32_t>{2});
  auto outside = task_affinity(*parse_cpu_bind("map_cpu:5"), step, 0, 1);
  REQUIRE_FALSE(outside.is_ok());
  CHECK(outside.status().message().find("CPU 5") != std::string::npos);
  CHECK(task_affinity(*parse_cpu_bind("mask_cpu:0xc0"), step, 0, 1).value() == std::vector<int32_t>{6, 7});
  CHECK_FALSE(task_affinity(*parse_cpu_bind("mask_cpu:0x1"), step, 0, 1).is_ok());
  CHECK(task_affinity(cores, {}, 0, 1)->empty());  // CPUs not known: not bound
}

TEST_CASE("cpu choice: --hint=nomultithread takes whole cores, least used first, and binds one thread of each") {
  std::vector<std::vector<int32_t>> cores = {{0, 4}, {1, 5}, {2, 6}, {3, 7}};  // siblings i and i+4
  std::vector<int32_t> pool = {0, 1, 2, 3, 4, 5, 6, 7};
  CHECK(choose_cores(pool, {}, 4, {}, cores) == std::vector<int32_t>{0, 1, 4, 5});
  std::map<int32_t, int32_t> busy = {{0, 1}, {5, 1}};
  CHECK(choose_cores(pool, busy, 4, {}, cores) == std::vector<int32_t>{2, 3, 6, 7});
  CHECK(choose_cores(pool, {}, 2, {3}, cores) == std::vector<int32_t>{3, 7});  // next to its GPUs first
  CHECK(choose_cores({0, 1, 2, 4}, {}, 4, {}, cores) == std::vector<int32_t>{0, 1, 2, 4});  // one whole core: CPUs as they come
  CHECK(choose_cores(pool, {}, 3, {}, {}) == std::vector<int32_t>{0, 1, 2});                // cores unknown
  CHECK(first_threads({0, 1, 4, 5}, cores) == std::vector<int32_t>{0, 1});
  CHECK(first_threads({2, 6, 7}, cores) == std::vector<int32_t>{2, 7});
  CHECK(first_threads({2, 6}, {}) == std::vector<int32_t>{2, 6});
}

TEST_CASE("cpu bind: verbose's line per task is Slurm 22.05's - unit, kind, node, ids padded to 2, hex mask, ' set' unless none") {
  CHECK(cpu_mask_hex({}) == "0");
  CHECK(cpu_mask_hex({0}) == "1");
  CHECK(cpu_mask_hex({0, 1, 4}) == "13");
  CHECK(cpu_mask_hex({5, 6, 7}) == "e0");
  CHECK(cpu_mask_hex({64}) == "10000000000000000");
  auto line = [](std::string_view spec, uint32_t g, uint32_t l, std::vector<int32_t> mask) {
    auto r = cpu_bind_report(*parse_cpu_bind(spec), "n1", g, l, mask);
    return r.head + "4242" + r.tail;
  };
  CHECK(line("verbose,cores", 0, 0, {0, 1}) == "cpu-bind-cores=MASK - n1, task  0  0 [4242]: mask 0x3 set\n");
  CHECK(line("v,threads", 12, 3, {7}) == "cpu-bind-threads=MASK - n1, task 12  3 [4242]: mask 0x80 set\n");
  CHECK(line("verbose", 1, 1, {2, 3}) == "cpu-bind=MASK - n1, task  1  1 [4242]: mask 0xc set\n");
  CHECK(line("verbose,none", 0, 0, {0, 1, 2, 3}) == "cpu-bind=NONE - n1, task  0  0 [4242]: mask 0xf\n");
  CHECK(line("verbose,rank", 2, 0, {2}) == "cpu-bind=RANK - n1, task  2  0 [4242]: mask 0x4 set\n");
  CHECK(line("verbose,map_cpu:1", 0, 0, {1}) == "cpu-bind=MAP  - n1, task  0  0 [4242]: mask 0x2 set\n");
  CHECK(line("verbose,mask_cpu:0x6", 0, 0, {1, 2}) == "cpu-bind=MASK - n1, task  0  0 [4242]: mask 0x6 set\n");
  CHECK(line("verbose,sockets", 100, 10, {0}) == "cpu-bind-sockets=MASK - n1, task 100 10 [4242]: mask 0x1 set\n");
}
