// The time map against brute force: intervals() agrees with units_at() at every slot,
// for classes whose free resources only grow and for ones a reservation dips;
// earliest() finds the first slot node-by-node sums find, and its room holds every node
// with room there; now groups follow starts; the division shortcut is exact.
#include <doctest/doctest.h>

#include <random>

#include "core/timemap.hpp"

using namespace hq;

namespace {

// Units at each slot by intervals(), expanded.
std::vector<int32_t> by_intervals(TimeMap& map, int32_t node, const UnitNeed& need) {
  std::vector<int32_t> out(map.horizon(), 0);
  std::vector<Interval> ivs;
  map.intervals(map.class_of(node), need, ivs);
  for (const Interval& iv : ivs)
    for (int32_t s = iv.from; s < iv.to; ++s) out[s] = iv.units;
  return out;
}

UnitNeed need_of(int32_t cpus, int32_t slots, int32_t max_units = 64) {
  UnitNeed n;
  n.cpus = cpus;
  n.mem = 100;
  n.max_units = max_units;
  n.slots = slots;
  n.cpus_magic = division_magic(cpus);
  return n;
}

}  // namespace

TEST_CASE("division_magic divides exactly below 2^16") {
  for (int32_t d : {1, 2, 3, 5, 7, 10, 31, 32, 33, 63, 64, 100, 127, 1000, 4099, 65535}) {
    uint64_t m = division_magic(d);
    for (uint64_t n = 0; n < 65536; ++n) REQUIRE(((n * m) >> 32) == n / static_cast<uint64_t>(d));
  }
  CHECK(division_magic(0) == 0);
  CHECK(division_magic(65536) == 0);
}

TEST_CASE("intervals match units_at at every slot, with and without dips") {
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    TimeMap map(120);
    int32_t total = 8 + static_cast<int32_t>(rng() % 57);
    int32_t busy = static_cast<int32_t>(rng() % (total + 1));
    int32_t node = map.add_node(0, total, int64_t{total} * 1000, total - busy, int64_t{total - busy} * 1000);
    int32_t released = 0;
    for (int k = 0; k < 3 && released < busy; ++k) {
      int32_t part = 1 + static_cast<int32_t>(rng() % (busy - released));
      map.add_release(node, 1 + static_cast<int32_t>(rng() % 150), part, int64_t{part} * 1000);
      released += part;
    }
    map.finalize();
    if (rng() % 2) {  // a reservation dips the free profile
      int32_t from = 1 + static_cast<int32_t>(rng() % 60);
      int32_t cpus = 1 + static_cast<int32_t>(rng() % total);
      map.take(node, from, from + 1 + static_cast<int32_t>(rng() % 40), cpus, int64_t{cpus} * 100);
    }
    UnitNeed need = need_of(1 + static_cast<int32_t>(rng() % 16), 1 + static_cast<int32_t>(rng() % 90));
    if (rng() % 5 == 0) need.slots = kForever;
    auto got = by_intervals(map, node, need);
    for (int32_t s = 0; s < map.horizon(); ++s) REQUIRE(got[s] == map.units_at(node, need, s));
  }
}

TEST_CASE("intervals stay right when needs alternate on one map") {
  std::mt19937 rng(11);
  TimeMap map(120);
  std::vector<int32_t> nodes;
  for (int i = 0; i < 6; ++i) {
    int32_t n = map.add_node(0, 32, 32000, 8 * (i % 3), 8000 * (i % 3));
    map.add_release(n, 5 + 20 * i, 32 - 8 * (i % 3), (32 - 8 * (i % 3)) * 1000);
    nodes.push_back(n);
  }
  map.finalize();
  for (int round = 0; round < 300; ++round) {
    // A few resource needs, each with different caps and durations, in random order.
    UnitNeed need = need_of(1 + static_cast<int32_t>(rng() % 3) * 4, 1 + static_cast<int32_t>(rng() % 90),
                            1 + static_cast<int32_t>(rng() % 8));
    if (rng() % 4 == 0) need.slots = kForever;
    int32_t node = nodes[rng() % nodes.size()];
    auto got = by_intervals(map, node, need);
    for (int32_t s = 0; s < map.horizon(); ++s) REQUIRE(got[s] == map.units_at(node, need, s));
    if (round % 50 == 49) {  // a start moves a node to a new class
      int32_t n = nodes[rng() % nodes.size()];
      map.take(n, 0, 10 + static_cast<int32_t>(rng() % 50), 1, 100);
    }
  }
}

TEST_CASE("now groups follow what nodes have free now") {
  TimeMap map(60);
  int32_t a = map.add_node(0, 64, 64000, 64, 64000);
  int32_t b = map.add_node(0, 64, 64000, 64, 64000);
  map.finalize();
  REQUIRE(map.now_group_count() == 1);
  CHECK(map.now_group(0).nodes == std::vector<int32_t>{a, b});
  map.take(a, 0, 10, 16, 1000);
  bool found = false;
  for (int32_t g = 0; g < map.now_group_count(); ++g) {
    const auto& group = map.now_group(g);
    if (group.free_cpus == 48) {
      CHECK(group.nodes == std::vector<int32_t>{a});
      found = true;
    }
    if (group.free_cpus == 64) CHECK(group.nodes == std::vector<int32_t>{b});
  }
  CHECK(found);
  map.take(b, 5, 10, 64, 0);  // a future reservation leaves b's free-now alone
  CHECK(map.units_at(b, need_of(1, 3), 0) == 64);
  CHECK(map.units_at(b, need_of(1, 10), 0) == 0);
  CHECK(map.live_classes().size() == 2);
}

namespace {

// A random map of two node types (32 and 16 CPUs), with releases, starts and reservations.
TimeMap random_map(std::mt19937& rng, int32_t horizon) {
  TimeMap map(horizon);
  int32_t nodes = 1 + static_cast<int32_t>(rng() % 12);
  for (int32_t i = 0; i < nodes; ++i) {
    int32_t type = static_cast<int32_t>(rng() % 2), total = type ? 16 : 32;
    int32_t busy = static_cast<int32_t>(rng() % (total + 1));
    int32_t node = map.add_node(type, total, int64_t{total} * 1000, total - busy, int64_t{total - busy} * 1000);
    for (int k = 0; k < 2 && busy > 0; ++k) {
      int32_t part = 1 + static_cast<int32_t>(rng() % busy);
      map.add_release(node, 1 + static_cast<int32_t>(rng() % (horizon + 30)), part, int64_t{part} * 1000);
      busy -= part;
    }
  }
  map.finalize();
  for (int k = static_cast<int>(rng() % 6); k > 0; --k) {
    int32_t node = static_cast<int32_t>(rng() % static_cast<uint32_t>(nodes));
    int32_t from = rng() % 3 == 0 ? 0 : static_cast<int32_t>(rng() % 60);
    int32_t to = rng() % 5 == 0 ? kForever : from + 1 + static_cast<int32_t>(rng() % 50);
    int32_t cpus = 1 + static_cast<int32_t>(rng() % 8);
    map.take(node, from, to, cpus, int64_t{cpus} * 100);
  }
  return map;
}

// Whether a scheduler would list `node` among the groups with room now.
bool group_has_room(const TimeMap& map, int32_t node, const UnitNeed& need) {
  const auto& group = map.now_group(map.now_group_of(node));
  int32_t first = group.nodes.front();
  return group.free_cpus > 0 && map.units_for(first, group.free_cpus, map.total_mem(first), group.free_gpus, need) > 0;
}

}  // namespace

TEST_CASE("earliest agrees with node-by-node sums and its room holds every node with room") {
  std::mt19937 rng(23);
  int32_t found = 0;
  for (int round = 0; round < 400; ++round) {
    TimeMap map = random_map(rng, 100);
    for (int q = 0; q < 5; ++q) {
      UnitNeed need = need_of(1 + static_cast<int32_t>(rng() % 8), 1 + static_cast<int32_t>(rng() % 90),
                              1 + static_cast<int32_t>(rng() % 8));
      if (rng() % 5 == 0) need.slots = kForever;
      if (rng() % 7 == 0) need.whole_node = true;
      std::vector<char> type_ok{static_cast<char>(rng() % 3 != 0), 1};
      if (rng() % 3 == 0) std::swap(type_ok[0], type_ok[1]);
      int64_t want = 1 + static_cast<int64_t>(rng() % 40);
      int32_t from = 1 + static_cast<int32_t>(rng() % 20), last = from + static_cast<int32_t>(rng() % 110);
      int32_t expect = -1;
      for (int32_t s = from; s <= std::min(last, map.horizon() - 1) && expect < 0; ++s) {
        int64_t sum = 0;
        for (int32_t n = 0; n < map.node_count(); ++n)
          if (type_ok[static_cast<size_t>(map.type_of(n))]) sum += map.units_at(n, need, s);
        if (sum >= want) expect = s;
      }
      std::vector<int32_t> room;
      int64_t read = 0;
      int32_t got = map.earliest(need, type_ok, want, from, last, room, read);
      REQUIRE(got == expect);
      if (got < 0) continue;
      ++found;
      for (int32_t n = 0; n < map.node_count(); ++n) {
        if (!type_ok[static_cast<size_t>(map.type_of(n))] || map.units_at(n, need, got) == 0) continue;
        bool listed = std::find(room.begin(), room.end(), map.class_of(n)) != room.end();
        CHECK((listed || group_has_room(map, n, need)));
      }
    }
  }
  CHECK(found > 200);  // the rounds are not all unanswerable
}
