// What a step manager tells others about its steps: the record the controller keeps for
// scontrol show step, squeue -s and hq show job (made when a step starts, finished when
// it ends), and a node's own view of what runs on it (hq node list-jobs, list-steps,
// list-pids; Slurm's scontrol listjobs/liststeps/listpids), answered without the controller.
// Runs on the agent's event-loop thread.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "cmd/agent/node_tasks.hpp"
#include "cmd/agent/step_manager.hpp"
#include "core/job.hpp"
#include "core/step_layout.hpp"
#include "hq.pb.h"

namespace hq::cmd {

pb::StepRecord new_step_record(const pb::StepCreate& req, const StepLayout& layout, const Job& job, uint32_t step_id,
                               const std::string& nodelist);
// `code`: srun's exit code for it; `end_state`: CANCELLED or NODE_FAIL when that ended it.
void end_step_record(pb::StepRecord& record, int code, const std::string& end_state);
// A node's usage of the step (with its last tasks' TaskExited) into the record: the
// largest peak memory of one node, CPU time summed.
void add_step_usage(pb::StepRecord& record, const pb::TaskExited& e);

// Collects a node's jobs and step tasks, keeping only those `uid` may see (root: all).
class NodeView {
 public:
  NodeView(std::string node, uid_t uid) : node_(std::move(node)), uid_(uid) {}
  void job(const StepManager::LocalJob& j);  // jobs first: steps of jobs not listed are not shown
  void step(uint64_t job_id, uint32_t step_id, const std::string& name, const std::vector<NodeTasks::TaskPid>& tasks);
  // what: "jobs", "steps" or "pids"; anything else gives no entries.
  pb::NodeLocalReply reply(const std::string& what) const;

 private:
  std::string node_;
  uid_t uid_;
  std::map<uint64_t, StepManager::LocalJob> jobs_;
  std::vector<pb::NodeLocalEntry> steps_, pids_;
};

}  // namespace hq::cmd
