// scontrol show partition prints Slurm 22.05's record: the golden is Slurm's own output on
// the slurm-bench (tests/fixtures/slurm/scontrol/show_partition.out: one partition "bench"
// of 8 nodes x 16 CPUs x 1000 MB, Slurm's defaults), rebuilt here from the same settings.
#include <doctest/doctest.h>

#include "cmd/client/partition_text.hpp"
#include "golden_cases.hpp"

using namespace hq;

namespace {

pb::NodesReply bench_cluster() {
  pb::NodesReply r;
  pb::Partition* p = r.add_partitions();
  p->set_name("bench");
  p->set_nodes("n[1-8]");
  p->set_is_default(true);
  p->set_max_time(-1);
  p->set_default_time(-1);
  p->set_total_nodes(8);
  p->set_state("UP");
  p->set_min_nodes(0);
  p->set_priority_tier(1);
  p->set_priority_job_factor(1);
  p->set_preempt_mode("OFF");
  for (int i = 1; i <= 8; ++i) {
    pb::Node* n = r.add_nodes();
    n->set_name("n" + std::to_string(i));
    n->set_cpus(16);
    n->set_mem_mib(1000);
    n->add_partitions("bench");
  }
  return r;
}

}  // namespace

TEST_CASE("scontrol show partition: Slurm 22.05's record, byte for byte, for the same partition") {
  pb::NodesReply r = bench_cluster();
  CHECK(cmd::partition_text(r.partitions(0), r) == test::slurp_file(test::golden_dir("scontrol") + "show_partition.out"));
}

TEST_CASE("scontrol show partition: what hq sets - allowed accounts and groups, limits, root jobs, memory, GPUs") {
  pb::NodesReply r = bench_cluster();
  pb::Partition& p = *r.mutable_partitions(0);
  p.add_allow_accounts("physics");
  p.add_allow_accounts("chem");
  p.add_allow_groups("hpc");
  p.set_is_default(false);
  p.set_max_time(2 * 86400 + 3600);
  p.set_default_time(1800);
  p.set_max_nodes(4);
  p.set_min_nodes(1);
  p.set_exclusive(true);
  p.set_disable_root_jobs(true);
  p.set_grace_time(30);
  p.set_preempt_mode("REQUEUE");
  p.set_state("DRAIN");
  p.set_def_mem_per_cpu_mib(512);
  for (auto& n : *r.mutable_nodes()) {
    n.set_mem_mib(4096);
    n.set_gpus(2);
  }
  r.mutable_nodes(7)->clear_partitions();  // not a member: not counted
  std::string text = cmd::partition_text(p, r);
  CHECK(text.find("\n   AllowGroups=hpc AllowAccounts=physics,chem AllowQos=ALL\n") != std::string::npos);
  CHECK(text.find("\n   AllocNodes=ALL Default=NO QoS=N/A\n") != std::string::npos);
  CHECK(text.find("\n   DefaultTime=00:30:00 DisableRootJobs=YES ExclusiveUser=NO GraceTime=30 Hidden=NO\n") != std::string::npos);
  CHECK(text.find("\n   MaxNodes=4 MaxTime=2-01:00:00 MinNodes=1 LLN=NO MaxCPUsPerNode=UNLIMITED\n") != std::string::npos);
  CHECK(text.find(" OverSubscribe=EXCLUSIVE\n") != std::string::npos);
  CHECK(text.find("\n   OverTimeLimit=NONE PreemptMode=REQUEUE\n") != std::string::npos);
  CHECK(text.find("\n   State=DRAIN TotalCPUs=112 TotalNodes=8 SelectTypeParameters=NONE\n") != std::string::npos);
  CHECK(text.find("\n   DefMemPerCPU=512 MaxMemPerNode=UNLIMITED\n") != std::string::npos);
  CHECK(text.find("\n   TRES=cpu=112,mem=28G,node=8,billing=112,gres/gpu=14\n\n") != std::string::npos);
}
