#include "core/pmix_map.hpp"

#include <cstdio>
#include <map>

#include "core/step_exit.hpp"

namespace hq {
namespace {

std::string join(const std::vector<uint32_t>& ids) {
  std::string out;
  for (uint32_t id : ids) out += (out.empty() ? "" : ",") + std::to_string(id);
  return out;
}

std::string key_of(const std::string& kv) { return kv.substr(0, kv.find('=')); }

}  // namespace

std::string pmix_nspace(uint64_t job, uint32_t step) {
  return "slurm.pmix." + step_label(job, step);
}

PmixStepMap pmix_step_map(uint64_t job, uint32_t step, const std::vector<StepNode>& layout, size_t here) {
  PmixStepMap m;
  m.nspace = pmix_nspace(job, step);
  m.job_id = step_label(job, step);
  m.here = here;
  size_t ntasks = 0;
  for (const StepNode& n : layout) ntasks += n.tasks.size();
  m.ranks.resize(ntasks);
  for (size_t i = 0; i < layout.size(); ++i) {
    const StepNode& n = layout[i];
    m.hosts.push_back(n.name);
    m.nodes += (i ? "," : "") + n.name;
    m.proc_map += (i ? ";" : "") + join(n.tasks);
    for (size_t local = 0; local < n.tasks.size(); ++local)
      if (n.tasks[local] < ntasks) m.ranks[n.tasks[local]] = {static_cast<uint32_t>(i), static_cast<uint16_t>(local)};
  }
  if (here < layout.size()) m.local = layout[here].tasks;
  m.local_peers = join(m.local);
  return m;
}

std::string precondition_transports(uint64_t job, uint32_t step) {
  char key[40];
  auto j = static_cast<unsigned>(job & 0xffffffffu);
  std::snprintf(key, sizeof key, "%08x%08x-%08x%08x", j, step, j, step);
  return key;
}

std::vector<std::string> with_pmix_env(std::vector<std::string> env, const std::vector<std::string>& pmix_vars,
                                       uint64_t job, uint32_t step) {
  std::map<std::string, size_t> at;
  for (size_t i = 0; i < env.size(); ++i) at[key_of(env[i])] = i;
  auto put = [&](const std::string& kv, bool replace) {
    auto [it, fresh] = at.emplace(key_of(kv), env.size());
    if (fresh) env.push_back(kv);
    else if (replace) env[it->second] = kv;
  };
  for (const auto& kv : pmix_vars) put(kv, true);
  put("OMPI_MCA_orte_precondition_transports=" + precondition_transports(job, step), false);
  return env;
}

}  // namespace hq
