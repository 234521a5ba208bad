// What the step manager's files share (cmd/agent/step_manager.cpp manages steps,
// step_hosting.cpp runs the tasks another node's manager sends here): the records of a
// managed and of a hosted step, and the messages both build. Internal to the step manager;
// agent event-loop thread only.
#pragma once
#include <cstddef>
#include <map>
#include <set>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cmd/agent/node_tasks.hpp"
#include "cmd/agent/pmi1_server.hpp"
#include "cmd/agent/step_exchange.hpp"
#include "cmd/agent/step_manager.hpp"
#include "core/step_exit.hpp"
#include "hq.pb.h"

namespace hq::cmd {

// A step managed here: its srun, its tasks here, and its tasks on other nodes.
struct StepManager::Step {
  uint64_t job_id = 0;
  uint32_t step_id = 0;
  ConnPtr srun;
  std::map<std::string, int32_t> cpus;  // the step's CPUs per node
  bool overlap = false;
  bool kill_on_bad_exit = false;
  bool oom_kill_step = false;            // --oom-kill-step: an OOM-killed task ends the step
  bool oom = false;                      // a task was OOM-killed (the step ends OUT_OF_MEMORY)
  std::map<std::string, std::vector<int32_t>> gpus;  // the GPUs it holds per node (asked for, not --overlap)
  std::map<std::string, int64_t> mem_mib;  // the memory it holds per node (--mem, not --overlap)
  bool terminating = false;
  bool done = false;
  bool output_paused = false;            // srun's queue passed the high-water mark: tasks' output waits
  std::set<std::string> stdin_full;      // nodes whose tasks hold too much unread stdin: srun stops reading its
  uint32_t first_task = 0;
  std::shared_ptr<NodeTasks> local;
  struct Remote {
    std::string node;
    ConnPtr link;                        // null until dialled
    std::vector<pb::Envelope> pending;   // stdin and signals for it before that
    size_t index = 0;                    // in the step (SLURM_NODEID)
  };
  std::vector<Remote> remotes;
  std::map<uint32_t, std::string> open;  // tasks not yet reported -> their node
  StepExitCode code;
  std::unique_ptr<StepGatherer> gather;     // the step's all-gather, for every node of it
  std::shared_ptr<StepExchange> exchange;   // this node's member, when it runs tasks of the step
  std::shared_ptr<Pmi1Server> pmi;          // --mpi=pmi2: this node's tasks' PMI server
  std::optional<int> abort_code;            // a task aborted the step (PMI abort): srun's exit code
  pb::StepRecord record;                 // for the controller's views
  std::string end_state;                 // CANCELLED or NODE_FAIL when not the tasks' doing
};

// Tasks run here for a step managed on another node. Until they are started (the job's
// LaunchJob may still be on its way), stdin and signals for them wait in `pending`.
struct StepManager::Hosted {
  ConnPtr link;
  std::shared_ptr<NodeTasks> tasks;
  std::vector<pb::Envelope> pending;
  std::shared_ptr<StepExchange> exchange;  // this node's member of the step's all-gather
  std::shared_ptr<Pmi1Server> pmi;
};

// As Slurm's MAX_TASKS_PER_NODE: more tasks than this on one node is refused.
constexpr size_t kMaxTasksPerNode = 512;
constexpr char kPmix[] = "pmix";

// Tasks that never started (exit code 1) or were lost with their node (as if SIGKILLed),
// with srun's line for it.
pb::Envelope lost_tasks(uint64_t job, uint32_t step, const std::string& node, const std::vector<uint32_t>& tasks,
                        const std::string& why, bool started = true);
// A task's PMI abort, to the step's manager and from it to srun; `lost`: a --mpi=pmix rank
// ended without MPI_Finalize (no code: the step ends as -K ends it).
pb::Envelope step_abort(uint64_t job, uint32_t step, int code, const std::string& node, bool lost = false);
// srun -i N: the task that alone gets stdin.
std::optional<uint32_t> only_task(const pb::TaskIO& io);

}  // namespace hq::cmd
