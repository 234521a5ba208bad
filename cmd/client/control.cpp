// `hq hold|uhold|release|requeue|requeuehold JOB...` (also `scontrol hold ...`) and
// `hq explain JOB`: job control actions and the why-is-it-pending report.
#include <iostream>

#include "cmd/client/output.hpp"
#include "cmd/commands.hpp"
#include "cmd/paths.hpp"
#include "core/units.hpp"

namespace hq::cmd {

int run_job_control(const Args& args) {
  std::string action = args[0];
  std::string prog = "hq " + action;
  pb::Envelope env;
  auto* req = env.mutable_job_control();
  req->set_action(action);
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "-h" || args[i] == "--help") {
      std::cout << "usage: hq " << action << " JOBID[_TASK]...   (an array's id acts on every task)\n";
      return 0;
    }
    for (std::string_view id : split(args[i], ','))  // scontrol also takes "1,2,3"
      if (!id.empty()) req->add_jobs(std::string(id));
  }
  if (req->jobs_size() == 0) return fail(prog, invalid("No job identification provided"));
  auto client = connect_client();
  if (!client) return fail(prog, client.status());
  auto reply = (*client)->call(env);
  if (!reply) return fail(prog, reply.status());
  for (const auto& e : reply->job_control_reply().errors()) std::cerr << prog << ": error: " << e << "\n";
  return reply->job_control_reply().errors_size() > 0 ? 1 : 0;
}

int run_explain(const Args& args) {
  std::string prog = "hq explain";
  if (args.size() != 2 || args[1] == "-h" || args[1] == "--help") {
    std::cout << "usage: hq explain JOBID   (why a job is pending: priority, reservation, partitions, nodes)\n";
    return args.size() == 2 ? 0 : 2;
  }
  auto id = parse_int(args[1], 1, INT64_MAX);
  if (!id) return fail(prog, invalid("Invalid job id specified: " + args[1]));
  pb::Envelope env;
  env.mutable_explain()->set_job_id(static_cast<uint64_t>(*id));
  auto client = connect_client();
  if (!client) return fail(prog, client.status());
  auto reply = (*client)->call(env);
  if (!reply) return fail(prog, reply.status());
  for (const auto& line : reply->explain_reply().lines()) std::cout << line << "\n";
  return 0;
}

}  // namespace hq::cmd
