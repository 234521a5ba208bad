// `hq cancel` / scancel: cancels jobs by id.
#include <iostream>

#include "cmd/client/output.hpp"
#include "cmd/client/retry.hpp"
#include "cmd/commands.hpp"
#include "cmd/paths.hpp"
#include "core/units.hpp"

namespace hq::cmd {

int run_cancel(const Args& args) {
  std::string prog = prog_name(args[0]);
  pb::Envelope env;
  auto* c = env.mutable_cancel();
  bool json = false;
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--json") {
      json = true;
      continue;
    }
    if (args[i] == "-h" || args[i] == "--help") {
      std::cout << "usage: hq cancel [--json] JOBID...\n";
      return 0;
    }
    auto us = args[i].find('_');
    auto n = parse_int(args[i].substr(0, us), 1, INT64_MAX);
    if (!n || (us != std::string::npos && !parse_int(args[i].substr(us + 1), 0, INT32_MAX)))
      return fail(prog, invalid("Invalid job id " + args[i]));
    if (us != std::string::npos) c->add_tasks(args[i]);
    else c->add_job_ids(static_cast<uint64_t>(*n));
  }
  if (c->job_ids_size() == 0 && c->tasks_size() == 0) return fail(prog, invalid("No job identification provided"));
  c->set_request_key(new_request_key());
  std::unique_ptr<net::RpcClient> client;
  auto reply = call_with_retry(client, env);
  if (!reply) return fail(prog, reply.status());
  if (json && !print_json(reply->cancel_reply())) return 1;
  if (!json) for (const auto& e : reply->cancel_reply().errors()) std::cerr << prog << ": error: " << e << "\n";
  return reply->cancel_reply().errors_size() > 0 ? 1 : 0;
}

}  // namespace hq::cmd
