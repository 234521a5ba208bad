// sinfo against Slurm 22.05.8's own output: each case of tests/fixtures/slurm/sinfo/cases.txt
// (captured on the slurm-bench) runs through hq's sinfo with a reply that holds what the
// bench cluster held, and must print the same bytes and exit with the same code.
#include <doctest/doctest.h>

#include <regex>

#include "cmd/client/sinfo_rows.hpp"
#include "golden_cases.hpp"

using namespace hq;

namespace {

// The bench cluster when the goldens were taken.
pb::NodesReply bench_reply() {
  pb::NodesReply r;
  r.set_cluster("bench");
  auto* p = r.add_partitions();
  p->set_name("bench");
  p->set_nodes("n[1-2]");
  p->set_is_default(true);
  p->set_max_time(-1);
  p->set_state("UP");
  p->set_preempt_mode("OFF");
  p->set_priority_tier(1);
  p->set_priority_job_factor(1);
  auto node = [&](const std::string& name, const std::string& state, int alloc) {
    pb::Node* n = r.add_nodes();
    n->set_name(name);
    n->set_cpus(2);
    n->set_mem_mib(1000);
    n->set_state(state);
    n->set_responding(true);
    n->set_alloc_cpus(alloc);
    n->set_weight(1);
    n->add_partitions("bench");
    return n;
  };
  node("n1", "MIXED", 1);
  pb::Node* n2 = node("n2", "DRAINED", 0);
  n2->set_reason("disk bad");
  n2->set_reason_uid(0);
  n2->set_reason_time(1795552464);
  return r;
}

struct Run {
  std::string out;
  int rc = 0;
};

Run run_sinfo(const std::vector<std::string>& args, const pb::NodesReply& reply) {
  auto got = test::capture_output([&] { return cmd::sinfo_with(args, [&](bool) -> Result<pb::NodesReply> { return reply; }); });
  static const std::regex kDate("^[A-Z][a-z]{2} [A-Z][a-z]{2} [ 0-9]{2} [0-9:]{8} [0-9]{4}\n");
  return {std::regex_replace(got.out, kDate, "", std::regex_constants::format_first_only), got.rc};
}

}  // namespace

TEST_CASE("sinfo prints what Slurm 22.05 prints, option for option") {
  pb::NodesReply reply = bench_reply();
  auto cases = test::golden_cases("sinfo");
  CHECK(cases.size() >= 20);
  for (const auto& c : cases) {
    CAPTURE(c.name);
    Run run = run_sinfo(c.args, reply);
    CHECK(run.out == c.out);
    CHECK(std::to_string(run.rc) + "\n" == c.rc);
  }
}

TEST_CASE("sinfo: partitions, node states and reasons beyond the bench's") {
  pb::NodesReply r = bench_reply();
  auto* gpu = r.add_partitions();
  gpu->set_name("gpu");
  gpu->set_nodes("n[2-3]");
  gpu->set_max_time(3600);
  gpu->set_state("UP");
  pb::Node* n3 = r.add_nodes();
  n3->set_name("n3");
  n3->set_cpus(4);
  n3->set_mem_mib(2000);
  n3->set_state("DOWN");
  n3->set_responding(false);
  n3->set_reason("Not responding");
  n3->set_weight(1);
  SUBCASE("the default layout: a line per partition and state, the partition's order") {
    Run run = run_sinfo({"sinfo"}, r);
    CHECK(run.out ==
          "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
          "bench*       up   infinite      1  drain n2\n"
          "bench*       up   infinite      1    mix n1\n"
          "gpu          up    1:00:00      1  down* n3\n"
          "gpu          up    1:00:00      1  drain n2\n");
  }
  SUBCASE("-N: a line per node and partition, by node name") {
    Run run = run_sinfo({"sinfo", "-N", "-h"}, r);
    CHECK(run.out ==
          "n1             1    bench* mix   \n"
          "n2             1    bench* drain \n"
          "n2             1       gpu drain \n"
          "n3             1       gpu down* \n");
  }
  SUBCASE("-R: nodes out of service by reason, partitions aside") {
    Run run = run_sinfo({"sinfo", "-R", "-o", "%E|%N"}, r);
    CHECK(run.out == "REASON|NODELIST\ndisk bad|n2\nNot responding|n3\n");
  }
  SUBCASE("-r and -d: responding nodes and the others") {
    CHECK(run_sinfo({"sinfo", "-h", "-d", "-o", "%N"}, r).out == "n3\n");
    CHECK(run_sinfo({"sinfo", "-h", "-r", "-p", "gpu", "-o", "%N %t"}, r).out == "n2 drain\n");
  }
  SUBCASE("-s counts nodes allocated/idle/other/total; CPUs likewise") {
    Run run = run_sinfo({"sinfo", "-s", "-h"}, r);
    CHECK(run.out == "bench*       up   infinite          1/0/1/2 n[1-2]\n"
                     "gpu          up    1:00:00          0/0/2/2 n[2-3]\n");
    CHECK(run_sinfo({"sinfo", "-h", "-o", "%C"}, r).out == "1/1/6/8\n");  // one row: no partition field
  }
  SUBCASE("-e splits nodes of another size; without it the smallest shows with a '+'") {
    CHECK(run_sinfo({"sinfo", "-h", "-p", "gpu", "-o", "%c %m %N"}, r).out == "2+ 1000+ n[2-3]\n");
    CHECK(run_sinfo({"sinfo", "-h", "-e", "-p", "gpu", "-o", "%c %m %N"}, r).out == "4 2000 n3\n2 1000 n2\n");
  }
  SUBCASE("-t: prefixes in any case; alloc takes any node with CPUs in use; & for all of") {
    CHECK(run_sinfo({"sinfo", "-h", "-N", "-t", "ALLOC", "-o", "%N"}, r).out == "n1\n");
    CHECK(run_sinfo({"sinfo", "-h", "-N", "-t", "no_respond,mix", "-o", "%N"}, r).out == "n1\nn3\n");
    CHECK(run_sinfo({"sinfo", "-h", "-N", "-t", "drain&idle", "-o", "%N %P"}, r).out == "n2 bench*\nn2 gpu\n");
  }
  SUBCASE("-S: keys in turn, '-' reverses") {
    CHECK(run_sinfo({"sinfo", "-h", "-N", "-S", "-c,N", "-o", "%N %c"}, r).out == "n3 4\nn1 2\nn2 2\nn2 2\n");
  }
  SUBCASE("the '*' of the default partition takes the last place of a narrow column") {
    CHECK(run_sinfo({"sinfo", "-h", "-p", "bench", "-o", "%5P|%3P|"}, r).out == "benc*|be*|\n");
  }
}
