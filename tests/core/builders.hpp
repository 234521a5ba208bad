// Test builders for core/ fixtures: short, readable clusters and jobs.
#pragma once
#include "core/cluster_state.hpp"
#include "core/hostlist.hpp"

namespace hq::test {

class JobBuilder {
 public:
  explicit JobBuilder(uint64_t id) { job_.id = JobId{id}; job_.partition = "batch"; job_.priority = 1; }
  JobBuilder& nodes(int n) { job_.spec.nodes_min = n; job_.spec.nodes_set = true; return *this; }
  JobBuilder& tasks(int n) { job_.spec.ntasks = n; job_.spec.ntasks_set = true; return *this; }
  JobBuilder& cpus(int c) { job_.spec.cpus_per_task = c; return *this; }
  JobBuilder& mem(int64_t mib) { job_.spec.mem_per_node_mib = mib; return *this; }
  JobBuilder& priority(int64_t p) { job_.priority = p; return *this; }
  JobBuilder& partition(std::string p) { job_.partition = std::move(p); return *this; }
  JobBuilder& held() { job_.held = true; return *this; }
  Job build() const { return job_; }
  operator Event() const { return JobSubmitted{job_}; }

 private:
  Job job_;
};

// A cluster of registered, responding nodes in partition "batch".
inline ClusterState cluster(const std::string& names, int cpus, int64_t mem_mib = 64 * 1024) {
  ClusterConfig c;
  NodeConfig nc;
  nc.names = *expand_hostlist(names);
  nc.cpus = cpus;
  nc.mem_mib = mem_mib;
  c.nodes.push_back(nc);
  PartitionConfig p;
  p.name = "batch";
  p.nodes = nc.names;
  p.is_default = true;
  c.partitions.push_back(p);
  ClusterState s = make_state(c);
  for (auto& [name, n] : s.nodes) n.registered = n.responding = true;
  return s;
}

}  // namespace hq::test
