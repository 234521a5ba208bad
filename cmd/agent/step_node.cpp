#include "cmd/agent/step_node.hpp"

#include "core/cpu_bind.hpp"
#include "core/job_env.hpp"
#include "core/step_env.hpp"
#include "core/step_exit.hpp"
#include "net/log.hpp"

namespace hq::cmd {

namespace {

// The step's group inside the job's, with the step's CPUs and memory; none without cgroups.
// A job whose group takes no children but may hold processes (v2, adopted from an agent
// before step groups) runs its steps in its own group, unless the step asked for a memory
// limit or GPUs to hide of its own; otherwise the step cannot start.
Result<JobCgroup> step_group(const StepNodePart& part) {
  if (!part.job_cgroup.active()) return JobCgroup{};
  // A step on all of the job's CPUs here needs no cpuset of its own where its group runs
  // on its parent's without one (v2): one write less per step.
  bool inherit = part.all_job_cpus && part.job_cgroup.inherits_cpus();
  CgroupLimits limits{inherit ? std::vector<int32_t>{} : part.cpus, part.mem_mib * 1024 * 1024, 0, part.deny_devices};
  auto group = part.job_cgroup.child("step_" + std::to_string(part.ids.step_id), limits);
  if (group || part.mem_mib > 0 || !part.deny_devices.empty() || !part.job_cgroup.may_hold_processes()) return group;
  log::warn(step_label(part.ids.job_id, part.ids.step_id) + ": its tasks run in the job's cgroup: " +
            group.status().message());
  return JobCgroup{};
}

// One plan per task here: the step's environment and the task's own variables, its group
// and its CPU binding.
Result<std::vector<TaskPlan>> task_plans(const StepNodePart& part, const JobCgroup& group) {
  auto bind = parse_cpu_bind(part.cpu_bind);
  if (!bind) return bind.status();
  std::vector<std::string> node_env = part.gpu_env ? with_node_gpus(part.env, *part.gpu_env) : std::vector<std::string>{};
  const std::vector<std::string>& env = part.gpu_env ? node_env : part.env;
  std::vector<TaskPlan> plans;
  // What a task that is not bound runs on: its group's CPUs, else the agent's own.
  std::vector<int32_t> inherited;
  if (bind->verbose) inherited = group.active() && !part.cpus.empty() ? part.cpus : own_affinity();
  for (size_t local = 0; local < part.here.tasks.size(); ++local) {
    auto cpus = task_affinity(*bind, part.cpus, static_cast<uint32_t>(local), part.cpus_per_task);
    if (!cpus) return cpus.status();
    plans.push_back(part.base);
    plans.back().env = task_environment(env, part.here, part.index, local);
    set_topology_addr(plans.back().env, part.topo);
    plans.back().affinity = std::move(cpus).value();
    if (bind->verbose)
      plans.back().bind_report = cpu_bind_report(*bind, part.base.node, part.here.tasks[local], static_cast<uint32_t>(local),
                                                 plans.back().affinity.empty() ? inherited : plans.back().affinity);
    plans.back().cgroup_procs = group.active() ? group.procs_files() : part.job_cgroup.procs_files();
  }
  if (part.attach)
    if (Status s = part.attach(plans); !s) return s;
  return plans;
}

}  // namespace

Result<StartedTasks> start_node_tasks(asio::io_context& io, const StepNodePart& part,
                                      std::shared_ptr<StepExchange> exchange, NodeTasks::Send send,
                                      Pmi1Server::OnAbort on_abort) {
  auto group = step_group(part);
  auto failed = [&](const Status& s) -> Result<StartedTasks> {
    if (group) {
      group->kill_all();
      group->remove();
    }
    if (part.on_done) part.on_done();
    return s;
  };
  if (!group) return failed(group.status());
  auto built = task_plans(part, *group);
  if (!built) return failed(built.status());
  std::vector<TaskPlan> plans = std::move(built).value();
  StartedTasks out;
  if (part.mpi == "pmi2") {
    PmiStep step{step_label(part.ids.job_id, part.ids.step_id), part.ntasks, 0, {}};
    if (!part.pmi_mapping.empty()) step.preput["PMI_process_mapping"] = part.pmi_mapping;
    auto pmi = Pmi1Server::prepare(io, step, part.here.tasks, plans, std::move(exchange), std::move(on_abort));
    if (!pmi) return failed(pmi.status());
    out.pmi = *pmi;
  }
  auto tasks = NodeTasks::launch(io, part.ids, plans, part.here.tasks, std::move(send));
  if (out.pmi) {
    out.pmi->started();  // the tasks have their ends: close ours
    if (!tasks) out.pmi->stop();
  }
  if (!tasks) return failed(tasks.status());
  out.tasks = *tasks;
  out.tasks->when_done(*group, part.on_done);
  return out;
}

}  // namespace hq::cmd
