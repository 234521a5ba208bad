// This node's part of a job step, and the start of its tasks: the step's own cgroup inside
// the job's (its CPUs, its --mem), a plan per task (the step's environment with the task's
// own variables, its CPU binding), a PMI-1 server for them when the step asked
// for --mpi=pmi2 (its barriers through the step's all-gather), or the step's PMIx namespace
// (--mpi=pmix: `attach`, which adds each rank's variables), then NodeTasks. Used alike
// for the step manager's own tasks and for the tasks it sends to other nodes.
// Runs on the agent's event-loop thread.
#pragma once
#include <asio/io_context.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cmd/agent/cgroup.hpp"
#include "cmd/agent/node_tasks.hpp"
#include "cmd/agent/pmi1_server.hpp"
#include "core/job_env.hpp"
#include "core/step_layout.hpp"

namespace hq::cmd {

class StepExchange;

struct StepNodePart {
  NodeTasks::Ids ids;
  StepNode here;                  // this node's tasks (global ids) and CPUs
  size_t index = 0;               // this node's index in the step (SLURM_NODEID)
  std::vector<std::string> env;   // the step's environment
  TaskPlan base;                  // argv, cwd, user, cgroup: the same for every task
  std::string mpi;                // "pmi2": a PMI-1 server; "pmix": `attach`
  int32_t ntasks = 0;             // the step's tasks (PMI_SIZE)
  std::string pmi_mapping;        // PMI_process_mapping
  std::optional<std::vector<std::string>> gpu_env;  // set: this node's GPU variables replace env's
  JobCgroup job_cgroup;           // the job's group here (inactive: no cgroups; tasks bound by affinity only)
  std::vector<int32_t> cpus;      // the step's CPUs here, ascending (empty: not known, not bound)
  bool all_job_cpus = false;      // `cpus` are all of the job's here
  int64_t mem_mib = 0;            // the step's memory limit here (0: the job's)
  std::vector<DeviceId> deny_devices;  // the job's GPUs here that are not the step's (where its group confines devices)
  std::string cpu_bind;           // srun --cpu-bind (validated here too: it came over the wire)
  int32_t cpus_per_task = 1;
  // Called once when the step's tasks here are over (or could not start): its CPUs are free.
  std::function<void()> on_done;
  // Set: called with the built plans (one per task here, in order) before the tasks start;
  // it may add to their environments (the PMIx server's attach). Its error starts nothing.
  std::function<Status(std::vector<TaskPlan>&)> attach;
  TopologyAddr topo;              // this node's place in the switch tree: SLURM_TOPOLOGY_ADDR (empty: the node's name)
};

struct StartedTasks {
  std::shared_ptr<NodeTasks> tasks;
  std::shared_ptr<Pmi1Server> pmi;  // null unless --mpi=pmi2
};

Result<StartedTasks> start_node_tasks(asio::io_context& io, const StepNodePart& part,
                                      std::shared_ptr<StepExchange> exchange, NodeTasks::Send send,
                                      Pmi1Server::OnAbort on_abort);

}  // namespace hq::cmd
