// scontrol update PartitionName=: State, MaxTime and DefaultTime as scontrol reads them; the
// event changes the partition (and only when something changes), and errors are Slurm's.
#include <doctest/doctest.h>

#include "core/partition_update.hpp"

using namespace hq;

TEST_CASE("partition update: State in any case, MaxTime and DefaultTime in --time's forms") {
  PartitionConfig p;
  p.name = "gpu";
  auto e = parse_partition_update(p, {"PartitionName=gpu", "state=down", "MaxTime=1:00:00", "DefaultTime=10"}, 50);
  REQUIRE(e.is_ok());
  CHECK(e->state == PartitionState::kDown);
  CHECK(e->max_time == 3600);
  CHECK(e->default_time == 600);
  CHECK(e->time == 50);
  ClusterConfig cfg;
  cfg.partitions.push_back(p);
  ClusterState s = make_state(cfg);
  CHECK(apply(s, *e));
  CHECK(s.partitions[0].state == PartitionState::kDown);
  CHECK(!apply(s, *e));  // the same again: nothing changes
  auto unlimited = parse_partition_update(p, {"MaxTime=UNLIMITED"}, 0);
  REQUIRE(unlimited.is_ok());
  CHECK(unlimited->max_time == kUnlimited);
  auto rounded = parse_partition_update(p, {"MaxTime=0:30", "DefaultTime=1:00:01"}, 0);
  REQUIRE(rounded.is_ok());
  CHECK(rounded->max_time == 60);  // whole minutes, as Slurm's time_str2mins
  CHECK(rounded->default_time == 61 * 60);
}

TEST_CASE("partition update: Slurm's errors") {
  PartitionConfig p;
  p.name = "gpu";
  CHECK(parse_partition_update(p, {"State=bogus"}, 0).status().message() == "Invalid input: State=bogus");
  CHECK(parse_partition_update(p, {"Nodes=n1"}, 0).status().message() == "Update of this parameter is not supported: Nodes=n1");
  CHECK(parse_partition_update(p, {"MaxTime=soon"}, 0).status().message() == "Invalid MaxTime value: soon");
}
