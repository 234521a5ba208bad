#include "cmd/agent/step_parts.hpp"

#include <csignal>

namespace hq::cmd {

pb::Envelope lost_tasks(uint64_t job, uint32_t step, const std::string& node, const std::vector<uint32_t>& tasks,
                        const std::string& why, bool started) {
  pb::Envelope env;
  auto* e = env.mutable_task_exited();
  e->set_job_id(job);
  e->set_step_id(step);
  e->set_node(node);
  for (uint32_t t : tasks) e->add_tasks(t);
  e->set_wait_status(started ? SIGKILL : 1 << 8);
  std::string line = why;
  if (!started) line = "Task launch for " + step_name(job, step) + " failed on node " + node + ": " + why;
  e->set_error(line);
  return env;
}

pb::Envelope step_abort(uint64_t job, uint32_t step, int code, const std::string& node, bool lost) {
  pb::Envelope env;
  auto* a = env.mutable_step_abort();
  a->set_job_id(job);
  a->set_step_id(step);
  a->set_exit_code(code);
  a->set_node(node);
  a->set_lost(lost);
  return env;
}

std::optional<uint32_t> only_task(const pb::TaskIO& io) {
  return io.only_task() ? std::optional<uint32_t>(io.task()) : std::nullopt;
}

}  // namespace hq::cmd
