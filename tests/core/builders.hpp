// Test builders for core/ fixtures: short, readable clusters and jobs.
#pragma once
#include "core/cluster_state.hpp"
#include "core/hostlist.hpp"
#include "core/scheduler.hpp"

namespace hq::test {

class JobBuilder {
 public:
  explicit JobBuilder(uint64_t id) { job_.id = JobId{id}; job_.partition = "batch"; job_.priority = 1; job_.time_limit = 3600; }
  JobBuilder& nodes(int n) { job_.spec.nodes_min = n; job_.spec.nodes_set = true; return *this; }
  JobBuilder& tasks(int n) { job_.spec.ntasks = n; job_.spec.ntasks_set = true; return *this; }
  JobBuilder& cpus(int c) { job_.spec.cpus_per_task = c; return *this; }
  JobBuilder& mem(int64_t mib) { job_.spec.mem_per_node_mib = mib; return *this; }
  // Priority through nice: the scheduler computes priorities itself (higher p runs first).
  JobBuilder& priority(int64_t p) { job_.spec.nice = static_cast<int32_t>(-p); return *this; }
  JobBuilder& partition(std::string p) { job_.partition = std::move(p); return *this; }
  JobBuilder& held() { job_.hold = HoldKind::kUser; return *this; }
  JobBuilder& limit(Duration d) { job_.time_limit = d; return *this; }
  JobBuilder& submitted(Time t) { job_.submit_time = job_.eligible_time = t; return *this; }
  JobBuilder& partitions(std::vector<std::string> p) { job_.partitions = p; job_.partition = p.front(); return *this; }
  JobBuilder& constraint(std::string c) { job_.spec.constraint = std::move(c); return *this; }
  JobBuilder& nodelist(std::string w) { job_.spec.nodelist = std::move(w); return *this; }
  JobBuilder& exclude(std::string x) { job_.spec.exclude = std::move(x); return *this; }
  JobBuilder& exclusive() { job_.spec.exclusive = true; return *this; }
  JobBuilder& exclusive_topo() { job_.spec.exclusive_topo = true; return *this; }
  JobBuilder& nice(int32_t n) { job_.spec.nice = n; return *this; }
  JobBuilder& begin(Time t) { job_.spec.begin_time = t; return *this; }
  JobBuilder& deadline(Time t) {
    JobExtras e = *job_.spec.extra;
    e.deadline = t;
    job_.spec.extra = e;
    return *this;
  }
  JobBuilder& time_min(Duration d) {
    JobExtras e = *job_.spec.extra;
    e.time_min = d;
    job_.spec.extra = e;
    return *this;
  }
  JobBuilder& reservation(std::string name) {
    JobExtras e = *job_.spec.extra;
    e.reservation = std::move(name);
    job_.spec.extra = e;
    return *this;
  }
  JobBuilder& depends(std::string d) { job_.spec.dependency = std::move(d); job_.dep_state = DepState::kWaiting; return *this; }
  JobBuilder& array(uint64_t array_id, int32_t task, int32_t throttle = 0) {
    job_.array_job_id = array_id; job_.array_task_id = task; job_.array_throttle = throttle; return *this;
  }
  JobBuilder& name(std::string n, uint32_t uid = 1000) { job_.spec.name = std::move(n); job_.spec.uid = uid; return *this; }
  JobBuilder& submit_key(std::string key) { job_.submit_key = std::move(key); return *this; }
  Job build() const { return job_; }
  operator Event() const { return JobSubmitted{job_}; }

 private:
  Job job_;
};

// A cluster of registered, responding nodes in partition "batch".
inline ClusterState cluster(const std::string& names, int cpus, int64_t mem_mib = 64 * 1024) {
  ClusterState s = make_state(uniform_cluster_config(*expand_hostlist(names), cpus, mem_mib, "batch"));
  for (auto& [name, n] : s.nodes) n.registered = n.responding = true;
  return s;
}


// Starts `id` on the named nodes (cpus each) at `t`, as the controller would.
inline void start(ClusterState& s, uint64_t id, const std::vector<std::string>& nodes, int cpus, Time t = 0,
                  int64_t mem = 0) {
  if (!s.jobs.count(JobId{id})) apply(s, JobBuilder(id).submitted(t));
  JobStarted e{JobId{id}, t, {}, ""};
  for (const auto& n : nodes) e.alloc.push_back({n, cpus, mem, 1});
  apply(s, e);
}

// The nodes a plan starts job `id` on (empty: it does not start it).
inline std::vector<std::string> started_nodes(const Plan& p, uint64_t id) {
  std::vector<std::string> out;
  for (const auto& s : p.starts)
    if (s.job.value == id)
      for (const auto& a : s.alloc) out.push_back(a.node);
  return out;
}

// A partition over `nodes` added to an existing cluster() state.
inline PartitionConfig& add_partition(ClusterState& s, const std::string& name, const std::string& nodes) {
  PartitionConfig p;
  p.name = name;
  p.nodes = *expand_hostlist(nodes);
  for (const auto& n : p.nodes) s.nodes[n].partitions.push_back(name);
  s.listed[name].insert(p.nodes.begin(), p.nodes.end());
  s.partitions.push_back(p);
  return s.partitions.back();
}

}  // namespace hq::test
