// Step records and a node's own view (see step_views.hpp).
#include "cmd/agent/step_views.hpp"

#include <ctime>
#include <unistd.h>

#include "core/units.hpp"

namespace hq::cmd {
namespace {

std::string distribution_name(const pb::StepCreate& req, const StepLayout& layout) {
  switch (static_cast<TaskDistribution>(req.distribution())) {
    case TaskDistribution::kBlock: return "Block";
    case TaskDistribution::kCyclic: return "Cyclic";
    case TaskDistribution::kPlane: return "Plane";
    default:  // as Slurm shows its default: cyclic when there are no more tasks than nodes
      return layout.ntasks <= static_cast<int32_t>(layout.nodes.size()) ? "Cyclic" : "Block";
  }
}

}  // namespace

pb::StepRecord new_step_record(const pb::StepCreate& req, const StepLayout& layout, const Job& job, uint32_t step_id,
                               const std::string& nodelist) {
  pb::StepRecord r;
  r.set_job_id(job.id.value);
  r.set_step_id(step_id);
  r.set_name(!req.name().empty() ? req.name() : req.argv_size() > 0 ? base_name(req.argv(0)) : "");
  r.set_state("RUNNING");
  r.set_nodelist(nodelist);
  r.set_ntasks(layout.ntasks);
  int32_t cpus = 0;
  for (const StepNode& n : layout.nodes) cpus += n.cpus;
  r.set_ncpus(cpus);
  r.set_nnodes(static_cast<int32_t>(layout.nodes.size()));
  r.set_start_time(static_cast<int64_t>(time(nullptr)));
  r.set_srun_host(req.launch_hostname());
  r.set_srun_pid(req.launch_pid());
  r.set_distribution(distribution_name(req, layout));
  r.set_uid(job.spec.uid);
  return r;
}

void end_step_record(pb::StepRecord& record, int code, const std::string& end_state) {
  record.set_end_time(static_cast<int64_t>(time(nullptr)));
  // A task killed by a signal ends its step CANCELLED, as Slurm records it (sacct: CANCELLED 0:9).
  record.set_state(!end_state.empty() ? end_state : code == 0 ? "COMPLETED" : code > 128 ? "CANCELLED" : "FAILED");
  if (code > 128) {
    record.set_exit_code(0);
    record.set_exit_signal(code - 128);
  } else {
    record.set_exit_code(code);
  }
}

void add_step_usage(pb::StepRecord& record, const pb::TaskExited& e) {
  if (e.has_peak_mem_bytes() && (!record.has_max_rss_bytes() || e.peak_mem_bytes() > record.max_rss_bytes())) {
    record.set_max_rss_bytes(e.peak_mem_bytes());
    record.set_max_rss_node(e.node());
  }
  if (e.has_cpu_time_usec()) record.set_total_cpu_usec(record.total_cpu_usec() + e.cpu_time_usec());
}

void NodeView::job(const StepManager::LocalJob& j) {
  if (uid_ == 0 || j.uid == uid_) jobs_[j.job_id] = j;
}

void NodeView::step(uint64_t job_id, uint32_t step_id, const std::string& name,
                    const std::vector<NodeTasks::TaskPid>& tasks) {
  auto job = jobs_.find(job_id);
  if (job == jobs_.end()) return;
  pb::NodeLocalEntry s;
  s.set_job_id(job_id);
  s.set_step(std::to_string(step_id));
  s.set_uid(job->second.uid);
  s.set_name(name);
  s.set_ntasks(static_cast<int32_t>(tasks.size()));
  steps_.push_back(s);
  for (const auto& t : tasks) {
    pb::NodeLocalEntry p = s;
    p.clear_ntasks();
    p.set_pid(t.pid);
    p.set_local_id(static_cast<int32_t>(t.local_id));
    p.set_global_id(static_cast<int32_t>(t.task));
    pids_.push_back(p);
  }
}

pb::NodeLocalReply NodeView::reply(const std::string& what) const {
  pb::NodeLocalReply out;
  out.set_node(node_);
  std::map<uint64_t, int32_t> steps_per_job;
  for (const auto& s : steps_) ++steps_per_job[s.job_id()];
  for (const auto& [id, j] : jobs_) {
    pb::NodeLocalEntry e;
    e.set_job_id(id);
    e.set_uid(j.uid);
    if (what == "jobs") {
      e.set_name(j.name);
      e.set_steps(steps_per_job[id] + (j.batch_pid > 0 ? 1 : 0));
    } else if (j.batch_pid > 0 && (what == "steps" || what == "pids")) {  // the batch script, as J.batch
      e.set_step("batch");
      e.set_name("batch");
      if (what == "steps") e.set_ntasks(1);
      if (what == "pids") {
        e.set_pid(j.batch_pid);
        e.set_local_id(-1);
        e.set_global_id(-1);
      }
    } else {
      continue;
    }
    *out.add_entries() = std::move(e);
  }
  const std::vector<pb::NodeLocalEntry>* tasks = what == "steps" ? &steps_ : what == "pids" ? &pids_ : nullptr;
  if (tasks)
    for (const auto& e : *tasks) *out.add_entries() = e;
  return out;
}

}  // namespace hq::cmd
