#include "core/submit_inert.hpp"

namespace hq {

const std::vector<InertOption>& inert_submit_options() {
  using A = InertArg;
  static const std::vector<InertOption> table = {
      // Accepted and told: a user expects these to act, and hq does not act on them yet.
      {"export-file", 0, A::kRequired, true, false, "the file is not read; --export decides the environment"},
      {"nodefile", 'F', A::kRequired, true, false, "the file is not read; use --nodelist"},
      {"gpus-per-socket", 0, A::kRequired, true, false, "GPUs are counted per node, not per socket, yet"},
      {"sockets-per-node", 0, A::kRequired, true, false, "nodes are chosen by CPU count, not socket layout, yet"},
      {"cores-per-socket", 0, A::kRequired, true, false, "nodes are chosen by CPU count, not socket layout, yet"},
      {"threads-per-core", 0, A::kRequired, true, false, "nodes are chosen by CPU count, not socket layout, yet"},
      {"extra-node-info", 'B', A::kRequired, true, false, "nodes are chosen by CPU count, not socket layout, yet"},
      {"ntasks-per-core", 0, A::kRequired, true, false, "tasks are placed per node, not per core, yet"},
      {"ntasks-per-socket", 0, A::kRequired, true, false, "tasks are placed per node, not per socket, yet"},
      {"mincpus", 0, A::kRequired, true, false, "nodes are chosen by the CPUs the tasks need"},
      {"tmp", 0, A::kRequired, true, false, "temporary disk is not tracked"},
      {"licenses", 'L', A::kRequired, true, false, "licenses are not tracked"},
      {"prefer", 0, A::kRequired, true, false, "features are required (--constraint) or not asked for; none is preferred"},
      {"ntasks-per-gpu", 0, A::kRequired, true, false, "tasks are placed per node, not per GPU, yet"},
      {"ntasks-per-tres", 0, A::kRequired, true, false, "tasks are placed per node, not per GPU, yet"},
      // Accepted: they mean nothing on hq.
      {"bb", 0, A::kRequired, false, false, "hq has no burst buffers"},
      {"bbf", 0, A::kRequired, false, false, "hq has no burst buffers"},
      {"cpu-freq", 0, A::kRequired, false, false, "hq does not set CPU frequencies"},
      {"delay-boot", 0, A::kRequired, false, false, "hq does not boot nodes"},
      {"reboot", 0, A::kNone, false, false, "hq does not boot nodes"},
      {"get-user-env", 0, A::kOptional, false, false, "the submitting shell's environment is exported already"},
      {"gres-flags", 0, A::kRequired, false, false, "GPUs are placed next to the job's CPUs by default"},
      {"ignore-pbs", 0, A::kNone, false, false, "hq reads no #PBS lines"},
      {"no-kill", 'k', A::kOptional, false, false, "a job on a node that fails ends NODE_FAIL either way"},
      {"clusters", 'M', A::kRequired, false, false, "hq is one cluster"},
      {"cluster", 0, A::kRequired, false, false, "hq is one cluster"},
      {"network", 0, A::kRequired, false, false, "hq has no network (switch) plugin"},
      {"wait-all-nodes", 0, A::kRequired, false, false, "a job starts once its nodes answer, as with 1"},
      {"cluster-constraint", 0, A::kRequired, false, false, "hq is one cluster"},
      {"distribution", 'm', A::kRequired, false, false, "it is srun's: steps take -m themselves"},
      {"mcs-label", 0, A::kRequired, false, false, "hq has no MCS plugin"},
      {"overcommit", 'O', A::kNone, false, false, "it is srun's: steps take -O themselves"},
      {"power", 0, A::kRequired, false, false, "hq does not manage power"},
      {"profile", 0, A::kRequired, false, false, "hq has no profiling plugin"},
      {"propagate", 0, A::kOptional, false, false, "the script starts with the agent's resource limits"},
      {"oversubscribe", 's', A::kNone, false, false, "hq shares nodes by CPU already"},
      {"core-spec", 'S', A::kRequired, false, false, "hq reserves no cores for the system"},
      {"thread-spec", 0, A::kRequired, false, false, "hq reserves no threads for the system"},
      {"spread-job", 0, A::kNone, false, false, "hq has no spread placement yet"},
      {"use-min-nodes", 0, A::kNone, false, false, "hq takes the smallest node count it can already"},
      {"contiguous", 0, A::kNone, false, false, "node names carry no adjacency on hq"},
      {"gpu-bind", 0, A::kRequired, false, false, "each task sees the job's GPUs on its node"},
      {"gpu-freq", 0, A::kRequired, false, false, "hq does not set GPU frequencies"},
      {"mem-bind", 0, A::kRequired, false, false, "memory is not bound to NUMA nodes"},
      {"verbose", 'v', A::kNone, false, false, "sbatch says nothing more"},
      {"acctg-freq", 0, A::kRequired, false, false, "a job's use is read from its cgroup at its end"},
      {"batch", 0, A::kRequired, false, false, "the script runs on the job's first node"},
      // Refused.
      {"container", 0, A::kRequired, false, true, "OCI containers are not supported by hq"},
      {"context", 0, A::kRequired, false, true, "SELinux contexts are not supported by hq"},
  };
  return table;
}

void tell_once(std::vector<std::string>& told, std::string line) {
  for (const std::string& t : told)
    if (t == line) return;
  told.push_back(std::move(line));
}

Status answer_inert_option(const InertOption& o, std::vector<std::string>& told, bool tell) {
  std::string what = "--" + std::string(o.name) + ": " + std::string(o.why);
  if (o.refused) return invalid(what);
  if (o.notice && tell) tell_once(told, std::move(what));
  return Status::ok();
}

}  // namespace hq
