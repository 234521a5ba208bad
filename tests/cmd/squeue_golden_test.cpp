// squeue against Slurm 22.05.8's own output: each case of tests/fixtures/slurm/squeue/cases.txt
// (captured on the slurm-bench) runs through hq's squeue with a reply holding the bench's
// jobs, and must print the same bytes and exit with the same code. Also: -w, -q and -L
// reach the controller as filters.
#include <doctest/doctest.h>

#include <algorithm>
#include <sstream>

#include "cmd/client/queue_format.hpp"
#include "golden_cases.hpp"

using namespace hq;

namespace {

pb::Job job(uint64_t id, const std::string& name, const std::string& state, int ntasks) {
  pb::Job j;
  j.set_job_id(id);
  j.set_state(state);
  j.set_partition("bench");
  j.set_time_limit(-1);
  j.mutable_spec()->set_name(name);
  j.mutable_spec()->set_user("root");
  j.mutable_spec()->set_ntasks(ntasks);
  j.mutable_spec()->set_partition("bench");
  return j;
}

// The bench's queue, and whether each job passes the request's filters as the controller's do.
pb::QueueReply bench_reply(const pb::QueueRequest& q) {
  pb::QueueReply r;
  r.set_now(1795552800);
  pb::Job alpha = job(3, "alpha", "RUNNING", 1);
  alpha.set_start_time(r.now());
  auto* a = alpha.add_alloc();
  a->set_node("n1");
  a->set_cpus(1);
  alpha.set_nodelist("n1");
  pb::Job beta = job(4, "beta", "PENDING", 2);
  beta.set_reason("Resources");
  beta.set_priority(2);
  pb::Job gamma = job(5, "gamma", "PENDING", 1);
  gamma.set_reason("JobHeldUser");
  gamma.set_priority(1);
  for (pb::Job* j : {&alpha, &beta, &gamma}) {
    bool on_node = q.nodes_size() == 0 || (j->alloc_size() > 0 && j->alloc(0).node() == q.nodes(0));
    bool named = q.job_ids_size() == 0 || std::find(q.job_ids().begin(), q.job_ids().end(), j->job_id()) != q.job_ids().end();
    bool state = q.state_filter() != "PD" || j->state() == "PENDING";
    if (on_node && named && state && q.licenses_size() == 0 && q.qos_size() == 0) *r.add_jobs() = *j;
  }
  return r;
}

// squeue `args` over the bench's jobs. `unparsed`: a brief listing's jobs come as
// serialized records, as run_queue fetches them (printed as they are parsed where each is
// a row of its own).
test::Captured run_squeue(const std::vector<std::string>& args, bool unparsed = false) {
  pb::QueueReply reply;
  std::vector<std::string> records;
  return test::capture_output([&] {
    return cmd::queue_with(args, [&](const pb::QueueRequest& q) -> Result<cmd::QueueAnswer> {
      reply = bench_reply(q);
      cmd::QueueAnswer answer{&reply, {}, {}};
      if (!unparsed || !q.brief()) return answer;
      records.clear();
      for (const pb::Job& j : reply.jobs()) records.push_back(j.SerializeAsString());
      reply.clear_jobs();
      for (const std::string& r : records) answer.records.emplace_back(r);
      return answer;
    });
  });
}

// The captured output without the lines Slurm's plugins write as they load at -v.
std::string without_plugin_lines(const std::string& out) {
  std::string kept;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("squeue: select/", 0) != 0) kept += line + "\n";
  return kept;
}

}  // namespace

TEST_CASE("squeue -O, -S, -w, -q, -L, -j, -s, -v and the words after the options as Slurm 22.05's") {
  auto cases = test::golden_cases("squeue");
  CHECK(cases.size() >= 19);
  for (const auto& c : cases) {
    CAPTURE(c.name);
    for (bool unparsed : {false, true}) {
      CAPTURE(unparsed);
      auto run = run_squeue(c.args, unparsed);
      CHECK(run.out == without_plugin_lines(c.out));
      CHECK(std::to_string(run.rc) + "\n" == c.rc);
    }
  }
}

TEST_CASE("squeue's filters travel to the controller") {
  pb::QueueRequest seen;
  pb::QueueReply none;
  auto capture = [&](const pb::QueueRequest& q) -> Result<cmd::QueueAnswer> {
    seen = q;
    return cmd::QueueAnswer{&none, {}, {}};
  };
  std::ostringstream sink;
  auto* old = std::cout.rdbuf(sink.rdbuf());
  int rc = cmd::queue_with({"squeue", "-w", "n[1-2]", "-q", "high,low", "-L", "matlab"}, capture);
  std::cout.rdbuf(old);
  CHECK(rc == 0);
  CHECK(std::vector<std::string>(seen.nodes().begin(), seen.nodes().end()) == std::vector<std::string>{"n1", "n2"});
  CHECK(std::vector<std::string>(seen.qos().begin(), seen.qos().end()) == std::vector<std::string>{"high", "low"});
  CHECK(seen.licenses_size() == 1);
}
