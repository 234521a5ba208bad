#include "core/sim.hpp"

#include <algorithm>
#include <cstdlib>
#include <queue>
#include <set>

#include "core/block_usage.hpp"

namespace hq {

SwfTrace parse_swf(std::string_view text) {
  SwfTrace t;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    std::string_view line = text.substr(pos, eol == std::string_view::npos ? std::string_view::npos : eol - pos);
    pos = eol == std::string_view::npos ? text.size() : eol + 1;
    size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string_view::npos) continue;
    if (line[first] == ';') {
      if (line.find("whole nodes") != std::string_view::npos) t.whole_nodes = true;
      continue;
    }
    std::string buf(line);
    const char* p = buf.c_str();
    double f[18];
    int n = 0;
    for (; n < 18; ++n) {
      char* end = nullptr;
      f[n] = std::strtod(p, &end);
      if (end == p) break;
      p = end;
    }
    if (n < 9) {
      ++t.bad_lines;
      continue;
    }
    SwfJob j;
    j.id = static_cast<uint64_t>(std::max(0.0, f[0]));
    j.submit = static_cast<Time>(f[1]);
    j.run = static_cast<Duration>(f[3]);
    j.procs = static_cast<int32_t>(f[7] > 0 ? f[7] : f[4]);
    j.limit = static_cast<Duration>(f[8]);
    j.user = n > 11 && f[11] > 0 ? static_cast<uint32_t>(f[11]) : 0;
    t.jobs.push_back(j);
  }
  return t;
}

namespace {

struct Completion {
  Time end;
  JobId id;
  bool operator>(const Completion& o) const { return end != o.end ? end > o.end : id > o.id; }
};

class Simulator {
 public:
  Simulator(const ClusterConfig& cfg, const SimOptions& opts, const std::function<double()>& clock)
      : cfg_(cfg), opts_(opts), clock_(clock), state_(make_state(cfg)), sched_(cfg.scheduler) {
    measure_ = block_topology_of(state_);
    if (opts.topology_off) state_.topology = TopologyConfig{}, state_.other_topologies.clear();
    for (auto& [name, n] : state_.nodes) {
      n.registered = n.responding = true;
      total_cpus_ += n.cpus;
      max_node_cpus_ = std::max(max_node_cpus_, n.cpus);
      free_cpus_ += n.cpus;
    }
  }

  Result<SimResult> run(const SwfTrace& trace) {
    if (total_cpus_ <= 0) return invalid("the cluster has no CPUs (give [[node]] sections cpus)");
    std::vector<const SwfJob*> jobs;
    for (const SwfJob& j : trace.jobs) {
      if (j.run <= 0 || j.procs <= 0 || j.procs > total_cpus_) { ++result_.skipped; continue; }
      jobs.push_back(&j);
    }
    std::stable_sort(jobs.begin(), jobs.end(), [](const SwfJob* a, const SwfJob* b) { return a->submit < b->submit; });
    size_t next = 0;
    Time first_submit = jobs.empty() ? 0 : jobs.front()->submit, last_end = first_submit;
    while (next < jobs.size() || !running_.empty()) {
      Time t = running_.empty() ? jobs[next]->submit
               : next < jobs.size() ? std::min(jobs[next]->submit, running_.top().end) : running_.top().end;
      bool freed = false;
      while (!running_.empty() && running_.top().end == t) {
        finish(running_.top().id, t);
        running_.pop();
        freed = true;
      }
      while (next < jobs.size() && jobs[next]->submit == t) submit(*jobs[next++], t);
      // A pass after arrivals alone cannot start anything while no CPU is free.
      if (freed || free_cpus_ > 0) pass(t);
      sample_fragmentation(t);
      if (!running_.empty()) last_end = std::max(last_end, running_.top().end);
    }
    for (const auto& [id, job] : state_.jobs) last_end = std::max(last_end, job.end_time);
    return summarize(first_submit, last_end);
  }

 private:
  void submit(const SwfJob& s, Time t) {
    Job job;
    job.id = JobId{state_.next_job_id};
    job.submit_time = job.eligible_time = t;
    job.partition = default_partition(cfg_) ? default_partition(cfg_)->name : "";
    job.time_limit = s.limit > 0 ? s.limit : s.run;
    job.spec.uid = s.user;
    job.spec.script = "#!/bin/sh\n";
    if (opts_.whole_nodes || max_node_cpus_ == 1) {
      int32_t per = std::max(1, max_node_cpus_);
      job.spec.nodes_min = (s.procs + per - 1) / per;
      job.spec.nodes_set = true;
      job.spec.exclusive = opts_.whole_nodes && per > 1;
    } else {
      job.spec.ntasks = s.procs;
      job.spec.ntasks_set = true;
    }
    run_time_[job.id] = std::min(s.run, job.time_limit);
    swf_id_[job.id] = s.id;
    apply(state_, JobSubmitted{std::move(job)});
  }

  void pass(Time t) {
    double c0 = clock_ ? clock_() : 0;
    Plan plan = sched_.schedule(state_, t);
    result_.sched_cpu_seconds += clock_ ? clock_() - c0 : 0;
    ++result_.passes;
    result_.held += plan.stats.held;
    for (auto& s : plan.starts) {
      for (const auto& a : s.alloc) free_cpus_ -= a.cpus;
      JobId id = s.job;
      apply(state_, JobStarted{id, t, std::move(s.alloc), std::move(s.partition), s.time_limit, std::move(s.qos)});
      running_.push({t + run_time_[id], id});
    }
  }

  void finish(JobId id, Time t) {
    Job& job = state_.jobs.at(id);
    int64_t cpus = 0;
    for (const auto& a : job.alloc) cpus += a.cpus;
    free_cpus_ += cpus;
    used_cpu_seconds_ += static_cast<double>(cpus) * static_cast<double>(t - job.start_time);
    Duration wait = job.start_time - job.submit_time, run = t - job.start_time;
    wait_sum_ += static_cast<double>(wait);
    result_.max_wait = std::max(result_.max_wait, static_cast<double>(wait));
    bsld_sum_ += std::max(1.0, static_cast<double>(wait + run) / static_cast<double>(std::max<Duration>(run, 10)));
    ++result_.jobs;
    count_topology(job, wait);
    if (opts_.record_starts)
      result_.starts.push_back({swf_id_[id], job.submit_time, job.start_time, t, static_cast<int32_t>(job.alloc.size())});
    apply(state_, JobEnded{id, t, JobState::kCompleted, 0, 0, JobReason::kNone});
    forget_finished(state_, id);  // finished jobs are no longer needed; keeps passes cheap
    run_time_.erase(id);
    swf_id_.erase(id);
  }

  // Slurm's fragmentation score of the idle nodes, integrated over time (it holds from
  // one event to the next).
  void sample_fragmentation(Time t) {
    if (!measure_.active()) return;
    if (frag_sampled_) frag_integral_ += static_cast<double>(frag_now_) * static_cast<double>(t - frag_since_);
    else frag_first_ = t, frag_sampled_ = true;
    frag_since_ = t;
    frag_now_ = block_fragmentation(measure_, [&](const std::string& n) {
      auto it = state_.nodes.find(n);
      return it != state_.nodes.end() && it->second.alloc_cpus == 0;
    });
  }

  // Blocks spanned by every job, and the waits of large ones.
  void count_topology(const Job& job, Duration wait) {
    std::set<int32_t> blocks;
    for (const auto& a : job.alloc)
      if (auto it = measure_.node_bblock.find(a.node); it != measure_.node_bblock.end()) blocks.insert(it->second);
    blocks_sum_ += static_cast<double>(blocks.size());
    if (static_cast<int32_t>(job.alloc.size()) < opts_.large_nodes) return;
    ++result_.large_jobs;
    large_blocks_sum_ += static_cast<double>(blocks.size());
    large_wait_sum_ += static_cast<double>(wait);
    if (wait <= 3600) ++large_within_hour_;
  }

  Result<SimResult> summarize(Time first, Time last) {
    result_.blocks = measure_.active();
    if (frag_since_ > frag_first_) result_.mean_fragmentation = frag_integral_ / static_cast<double>(frag_since_ - frag_first_);
    if (result_.jobs > 0) result_.mean_blocks = blocks_sum_ / static_cast<double>(result_.jobs);
    if (result_.large_jobs > 0) {
      auto large = static_cast<double>(result_.large_jobs);
      result_.mean_blocks_large = large_blocks_sum_ / large;
      result_.large_mean_wait = large_wait_sum_ / large;
      result_.large_within_hour = static_cast<double>(large_within_hour_) / large;
    }
    result_.makespan = last - first;
    if (result_.jobs > 0) {
      result_.mean_wait = wait_sum_ / static_cast<double>(result_.jobs);
      result_.mean_bounded_slowdown = bsld_sum_ / static_cast<double>(result_.jobs);
    }
    if (result_.makespan > 0)
      result_.utilization = used_cpu_seconds_ / (static_cast<double>(total_cpus_) * static_cast<double>(result_.makespan));
    if (state_.pending_jobs > 0) return internal(std::to_string(state_.pending_jobs) + " jobs never started");
    std::sort(result_.starts.begin(), result_.starts.end(), [](const SimStart& a, const SimStart& b) { return a.id < b.id; });
    return std::move(result_);
  }

  const ClusterConfig& cfg_;
  SimOptions opts_;
  const std::function<double()>& clock_;
  ClusterState state_;
  Scheduler sched_;
  std::priority_queue<Completion, std::vector<Completion>, std::greater<Completion>> running_;
  std::unordered_map<JobId, Duration> run_time_;
  std::unordered_map<JobId, uint64_t> swf_id_;
  int64_t total_cpus_ = 0, free_cpus_ = 0;
  int32_t max_node_cpus_ = 0;
  double used_cpu_seconds_ = 0, wait_sum_ = 0, bsld_sum_ = 0;
  BlockTopology measure_;  // the config's blocks, for the spans (even with topology_off)
  double blocks_sum_ = 0, large_blocks_sum_ = 0, large_wait_sum_ = 0;
  int64_t large_within_hour_ = 0;
  Time frag_first_ = 0, frag_since_ = 0;  // the first sample, the last one
  bool frag_sampled_ = false;
  int64_t frag_now_ = 0;
  double frag_integral_ = 0;
  SimResult result_;
};

}  // namespace

Result<SimResult> simulate(const SwfTrace& trace, const ClusterConfig& config, const SimOptions& opts,
                           const std::function<double()>& cpu_clock) {
  return Simulator(config, opts, cpu_clock).run(trace);
}

}  // namespace hq
