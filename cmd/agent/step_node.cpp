#include "cmd/agent/step_node.hpp"

#include "core/job_env.hpp"
#include "core/step_env.hpp"
#include "core/step_exit.hpp"

namespace hq::cmd {

Result<StartedTasks> start_node_tasks(asio::io_context& io, const StepNodePart& part,
                                      std::shared_ptr<StepExchange> exchange, NodeTasks::Send send,
                                      Pmi1Server::OnAbort on_abort) {
  std::vector<TaskPlan> plans;
  std::vector<std::string> node_env = part.gpu_env ? with_node_gpus(part.env, *part.gpu_env) : std::vector<std::string>{};
  const std::vector<std::string>& env = part.gpu_env ? node_env : part.env;
  for (size_t local = 0; local < part.here.tasks.size(); ++local) {
    plans.push_back(part.base);
    plans.back().env = task_environment(env, part.here, part.index, local);
  }
  if (part.attach)
    if (Status s = part.attach(plans); !s) return s;
  StartedTasks out;
  if (part.mpi == "pmi2") {
    PmiStep step{step_label(part.ids.job_id, part.ids.step_id), part.ntasks, 0, {}};
    if (!part.pmi_mapping.empty()) step.preput["PMI_process_mapping"] = part.pmi_mapping;
    auto pmi = Pmi1Server::prepare(io, step, part.here.tasks, plans, std::move(exchange), std::move(on_abort));
    if (!pmi) return pmi.status();
    out.pmi = *pmi;
  }
  auto tasks = NodeTasks::launch(io, part.ids, plans, part.here.tasks, std::move(send));
  if (out.pmi) {
    out.pmi->started();  // the tasks have their ends: close ours
    if (!tasks) out.pmi->stop();
  }
  if (!tasks) return tasks.status();
  out.tasks = *tasks;
  return out;
}

}  // namespace hq::cmd
