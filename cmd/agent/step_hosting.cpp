// The hosting side of the step manager: tasks of a step managed on another node (the
// job's first), started here from its StepLaunch and fed its stdin, signals and all-gather
// answers over the peer link. Agent event-loop thread only.
#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <algorithm>
#include <csignal>
#include <set>

#include "cmd/agent/step_node.hpp"
#include "cmd/agent/step_parts.hpp"
#include "cmd/agent/step_pmix.hpp"
#include "net/log.hpp"

namespace hq::cmd {
namespace {

// Whether every one of `gpus` is one of the job's GPUs on `node` (a StepLaunch's, checked
// against this node's own record of the job).
bool gpus_of_job(const StepManager::JobView& job, const std::string& node, const std::vector<int32_t>& gpus) {
  for (const NodeAlloc& a : job.job->alloc)
    if (a.node == node)
      return std::all_of(gpus.begin(), gpus.end(),
                         [&](int32_t g) { return std::find(a.gpus.begin(), a.gpus.end(), g) != a.gpus.end(); });
  return gpus.empty();
}

std::vector<StepNode> layout_of(const pb::StepLaunch& launch) {
  std::vector<StepNode> layout;
  for (const auto& n : launch.layout()) layout.push_back({n.node(), 0, {n.tasks().begin(), n.tasks().end()}});
  return layout;
}

}  // namespace

void StepManager::kill_hosted(Hosted& h) {
  if (h.tasks) return h.tasks->signal(SIGKILL);
  pb::Envelope kill;  // not started yet: killed as it starts
  kill.mutable_step_signal()->set_signal(SIGKILL);
  h.pending.push_back(kill);
}

// Tasks another node's step manager asks for. The job must be held here (its LaunchJob
// may still be on its way: a short wait) and that node must be the job's first.

asio::awaitable<void> StepManager::host(ConnPtr link, std::string node, pb::StepLaunch launch) {
  uint64_t job_id = launch.job_id();
  std::vector<uint32_t> ids(launch.tasks().begin(), launch.tasks().end());
  auto refuse = [&](const std::string& why) {
    log::warn(step_name(job_id, launch.step_id()) + " from " + node + " refused: " + why);
    link->send(lost_tasks(job_id, launch.step_id(), node_, ids, why, false));
  };
  StepKey key{job_id, launch.step_id()};
  std::set<uint32_t> distinct(ids.begin(), ids.end());
  if (launch.node_index() < 0 || ids.empty() || distinct.size() != ids.size() || launch.cpus() <= 0 ||
      ids.size() > kMaxTasksPerNode || launch.argv_size() == 0 || launch.ntasks() < static_cast<int32_t>(ids.size()) ||
      (launch.mpi() != "pmi2" && launch.mpi() != kPmix && !launch.mpi().empty() && launch.mpi() != "none"))
    co_return refuse("a malformed step launch (node index, tasks, CPUs, command or MPI type)");
  if (hosted_.count(key)) co_return refuse(step_name(job_id, launch.step_id()) + " already runs here");
  std::weak_ptr<net::Connection> weak_link = link;
  auto exchange = std::make_shared<StepExchange>(io_, job_id, launch.step_id(), static_cast<uint32_t>(launch.node_index()),
                                                 [weak_link](const pb::Envelope& in) {
                                                   if (auto l = weak_link.lock()) l->send(in);
                                                 });
  auto placeholder = std::make_shared<Hosted>(Hosted{link, nullptr, {}, exchange});
  hosted_[key] = placeholder;  // stdin and signals that come while it waits queue here
  auto job = find_job_(job_id);
  if (!job) job = co_await await_job(job_id, link);
  auto unplace = [&] {
    if (auto it = hosted_.find(key); it != hosted_.end() && it->second == placeholder) hosted_.erase(it);
  };
  if (!job) {
    unplace();
    co_return refuse("job " + std::to_string(job_id) + " is not on node " + node_);
  }
  if (job->job->alloc.empty() || job->job->alloc.front().node != node) {
    unplace();
    co_return refuse("node " + node + " does not manage job " + std::to_string(job_id) + "'s steps");
  }
  StepNodePart part{{job_id, launch.step_id(), node_, kill_wait_()},
                    StepNode{node_, launch.cpus(), ids},
                    static_cast<size_t>(launch.node_index()),
                    {launch.env().begin(), launch.env().end()},
                    plan_task(*job, {launch.argv().begin(), launch.argv().end()}, {}, launch.cwd()),
                    launch.mpi(),
                    launch.ntasks(),
                    launch.pmi_mapping()};
  std::vector<int32_t> gpus(launch.gpus().begin(), launch.gpus().end());
  if (gpus.empty())  // a manager from before per-step GPUs: the job's there, as it was
    for (const NodeAlloc& a : job->job->alloc)
      if (a.node == node_) gpus = a.gpus;
  if (!gpus_of_job(*job, node_, gpus)) {
    unplace();
    co_return refuse("GPUs that are not the job's on this node");
  }
  part.topo = job->topo;
  if (job->gpu_deny) part.deny_devices = job->gpu_deny(gpus);
  if (job->gpu_env) part.gpu_env = job->gpu_env(gpus, !part.deny_devices.empty());
  if (launch.mem_mib() < 0 || launch.mem_mib() > kMaxStepMemMib) {
    unplace();
    co_return refuse("a memory limit out of range");
  }
  if (launch.mpi() == kPmix) {
    std::vector<StepNode> layout = layout_of(launch);
    if (part.index >= layout.size() || layout[part.index].tasks != ids) {
      unplace();
      co_return refuse("a step layout without this node's tasks");
    }
    part.attach = pmix_attach(key, std::move(layout), part.index);
  }
  confine(part, *job, launch.mem_mib(), launch.cpu_bind(), launch.cpus_per_task());  // released by start_node_tasks
  auto started = start_node_tasks(
      io_, part, exchange,
      watch_ranks(key,
                  [this, key, weak_link](const pb::Envelope& msg) {
                    if (auto l = weak_link.lock()) l->send(msg);
                    if (!msg.has_task_exited()) return;  // output: nothing to look up
                    auto it = hosted_.find(key);
                    if (it != hosted_.end() && it->second->tasks && it->second->tasks->done()) {
                      if (it->second->pmi) it->second->pmi->stop();
                      hosted_.erase(it);
                      if (pmix_) pmix_->detach(key);
                    }
                  }),
      [this, key, weak_link](int code) {  // to the step's manager, which kills the step
        if (auto l = weak_link.lock()) l->send(step_abort(key.first, key.second, code, node_));
      });
  if (!started) {
    if (pmix_) pmix_->detach(key);
    unplace();
    co_return refuse(started.status().message());
  }
  placeholder->tasks = started->tasks;
  placeholder->pmi = started->pmi;
  track(started->tasks);
  if (!link->is_open()) started->tasks->signal(SIGKILL);
  std::vector<pb::Envelope> pending = std::move(placeholder->pending);
  for (const auto& m : pending) hosted_message(link, m);
}

void StepManager::hosted_message(const ConnPtr& link, const pb::Envelope& msg) {
  StepKey key = msg.has_task_io()             ? StepKey{msg.task_io().job_id(), msg.task_io().step_id()}
                : msg.has_step_exchange_out() ? StepKey{msg.step_exchange_out().job_id(), msg.step_exchange_out().step_id()}
                : msg.has_step_io_pause()     ? StepKey{msg.step_io_pause().job_id(), msg.step_io_pause().step_id()}
                                              : StepKey{msg.step_signal().job_id(), msg.step_signal().step_id()};
  auto it = hosted_.find(key);
  if (it == hosted_.end() || it->second->link != link) return;
  if (msg.has_step_exchange_out()) return it->second->exchange->deliver(msg.step_exchange_out());
  if (!it->second->tasks) return it->second->pending.push_back(msg);  // not started yet
  NodeTasks& tasks = *it->second->tasks;
  if (msg.has_task_io())
    return tasks.feed_stdin(msg.task_io().data(), msg.task_io().eof(), only_task(msg.task_io()), msg.task_io().per_task());
  if (msg.has_step_io_pause()) return tasks.pause_output(msg.step_io_pause().pause());
  if (msg.step_signal().terminate()) tasks.terminate();
  else tasks.signal(msg.step_signal().signal());
}

}  // namespace hq::cmd
