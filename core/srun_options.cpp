#include "core/srun_options.hpp"

#include <algorithm>

#include "core/cli_options.hpp"
#include "core/cpu_bind.hpp"
#include "core/hostlist.hpp"
#include "core/srun_inert.hpp"
#include "core/submit_options.hpp"
#include "core/units.hpp"

namespace hq {
namespace {

struct Parse {
  SrunRequest req;
  bool from_env = false;  // the value being set comes from the environment
};

using Option = CliOption<Parse>;

Status set_count(int32_t& field, std::string_view v, std::string_view what, int64_t min = 1) {
  auto n = parse_int(v, min, 1 << 24);
  if (!n) return invalid("Invalid numeric value \"" + std::string(v) + "\" for " + std::string(what) + ".");
  field = static_cast<int32_t>(*n);
  return Status::ok();
}

// -N MIN[-MAX]
Status set_nodes(Parse& p, std::string_view v) {
  size_t dash = v.find('-');
  if (Status s = set_count(p.req.step.nodes_min, v.substr(0, dash), "--nodes"); !s) return s;
  p.req.step.nodes_max = p.req.step.nodes_min;
  if (dash == std::string_view::npos) return Status::ok();
  if (Status s = set_count(p.req.step.nodes_max, v.substr(dash + 1), "--nodes"); !s) return s;
  if (p.req.step.nodes_max < p.req.step.nodes_min) return invalid("Invalid node count specification: " + std::string(v));
  return Status::ok();
}

// -m block|cyclic|plane=N|..., with :socket:core fields and ,Pack/,NoPack ignored.
Status set_distribution(Parse& p, std::string_view v) {
  std::string_view first = v.substr(0, v.find_first_of(":,"));
  StepRequest& s = p.req.step;
  if (first == "block") s.distribution = TaskDistribution::kBlock;
  else if (first == "cyclic") s.distribution = TaskDistribution::kCyclic;
  else if (first.rfind("plane=", 0) == 0) {
    s.distribution = TaskDistribution::kPlane;
    return set_count(s.plane_size, first.substr(6), "--distribution plane size");
  } else if (first == "*" || first.empty()) s.distribution = TaskDistribution::kDefault;
  else return invalid("Invalid --distribution specification: " + std::string(v));
  return Status::ok();
}

Status set_hosts(std::vector<std::string>& field, std::string_view v, std::string_view what) {
  auto names = expand_hostlist(v);
  if (!names) return invalid("Invalid " + std::string(what) + " '" + std::string(v) + "': " + names.status().message());
  field = std::move(names).value();
  return Status::ok();
}

Status set_mpi(Parse& p, std::string_view v) {
  if (v != "none" && v != "pmi2" && v != "pmix" && v != "pmix_v4" && v != "list")
    return invalid("Invalid MPI type '" + std::string(v) + "', --mpi=list for acceptable types");
  p.req.mpi = v == "pmix_v4" ? "pmix" : std::string(v);
  return Status::ok();
}

// A flag whose environment form carries a value: set unless it says 0/no.
bool env_flag(const Parse& p, std::string_view v) { return !p.from_env || (v != "0" && v != "no" && v != "NO"); }

Status set_time(Parse& p, std::string_view v) {
  auto d = parse_time_limit(v);
  if (!d) return invalid("Invalid time limit specification");
  p.req.time_limit = *d;
  return Status::ok();
}

Status set_mem(Parse& p, std::string_view v) {
  auto m = parse_size_mib(v);
  if (!m) return invalid("Invalid --mem specification");
  p.req.mem_mib = *m;
  return Status::ok();
}

// An option of core/srun_inert: refused, told (once), or taken silently. `o` is an entry of
// inert_srun_options()' static table.
Option inert_option(const InertOption& o) {
  auto set = [entry = &o](Parse& p, std::string_view v) -> Status {
    if (entry->allocation) {  // sbatch's table reads it if srun makes its allocation (parse_srun's end)
      p.req.allocation_options.push_back("--" + std::string(entry->name) +
                                         (entry->arg == InertArg::kNone || v.empty() ? "" : "=" + std::string(v)));
      return Status::ok();
    }
    return answer_inert_option(*entry, p.req.warnings, !p.from_env);
  };
  return {o.name, o.short_name, o.arg == InertArg::kRequired, set, o.arg == InertArg::kOptional};
}

// Slurm 22.05's srun long options, in the order its getopt lists them
// (tests/fixtures/slurm/getopt/prefixes.txt); hq's own (--controller, --ca, ...) are taken
// only whole.
const std::vector<std::string_view>& srun_getopt_names() {
  static const std::vector<std::string_view> names = {
      "accel-bind", "account", "acctg-freq", "bcast", "bcast-exclude", "begin", "bb", "bbf", "cluster-constraint",
      "chdir", "cluster", "clusters", "comment", "compress", "container", "context", "contiguous", "constraint",
      "core-spec", "cores-per-socket", "cpu-bind", "cpu_bind", "cpu-freq", "cpus-per-gpu", "cpus-per-task",
      "deadline", "debugger-test", "delay-boot", "dependency", "disable-status", "distribution", "epilog", "error",
      "exact", "exclude", "exclusive", "export", "extra-node-info", "gid", "gpu-bind", "gpu-freq", "gpus",
      "gpus-per-node", "gpus-per-socket", "gpus-per-task", "gres", "gres-flags", "help", "het-group", "hint", "hold",
      "immediate", "input", "interactive", "jobid", "job-name", "kill-on-bad-exit", "label", "licenses", "mail-type",
      "mail-user", "mcs-label", "mem", "mem-bind", "mem-per-cpu", "mem-per-gpu", "mincpus", "mpi", "msg-timeout",
      "multi-prog", "network", "nice", "no-allocate", "no-kill", "nodefile", "nodelist", "nodes", "ntasks",
      "ntasks-per-core", "ntasks-per-gpu", "ntasks-per-node", "ntasks-per-socket", "ntasks-per-tres", "open-mode",
      "output", "overcommit", "overlap", "oversubscribe", "pack-group", "partition", "power", "prefer",
      "preserve-env", "priority", "profile", "prolog", "propagate", "pty", "qos", "quiet", "quit-on-interrupt",
      "reboot", "relative", "reservation", "resv-ports", "send-libs", "signal", "slurmd-debug", "sockets-per-node",
      "spread-job", "switches", "threads", "task-epilog", "task-prolog", "tasks-per-node", "test-only",
      "thread-spec", "threads-per-core", "time", "time-min", "tmp", "uid", "unbuffered", "use-min-nodes", "usage",
      "verbose", "version", "wait", "wckey", "whole", "x11"};
  return names;
}

const std::vector<Option>& srun_table() {
  static const std::vector<Option> table = [] {
    std::vector<Option> t = {
      {"ntasks", 'n', true, [](Parse& p, std::string_view v) { return set_count(p.req.step.ntasks, v, "--ntasks"); }},
      {"nodes", 'N', true, set_nodes},
      {"ntasks-per-node", 0, true, [](Parse& p, std::string_view v) { return set_count(p.req.step.ntasks_per_node, v, "--ntasks-per-node"); }},
      {"cpus-per-task", 'c', true, [](Parse& p, std::string_view v) {
         p.req.step.cpus_per_task_set = !p.from_env;  // only the command line's implies --exact
         return set_count(p.req.step.cpus_per_task, v, "--cpus-per-task");
       }},
      {"distribution", 'm', true, set_distribution},
      {"nodelist", 'w', true, [](Parse& p, std::string_view v) { return set_hosts(p.req.step.nodelist, v, "--nodelist"); }},
      {"exclude", 'x', true, [](Parse& p, std::string_view v) { return set_hosts(p.req.step.exclude, v, "--exclude"); }},
      {"exact", 0, false, [](Parse& p, std::string_view v) { p.req.step.exact = env_flag(p, v); return Status::ok(); }},
      {"exclusive", 0, false, [](Parse& p, std::string_view v) {  // Slurm's =user, =mcs: whole nodes too
         p.req.step.exact = p.req.exclusive = env_flag(p, v);
         return Status::ok();
       }, true},
      {"partition", 'p', true, [](Parse& p, std::string_view v) { p.req.partition = v; return Status::ok(); }},
      {"overlap", 0, false, [](Parse& p, std::string_view v) { p.req.step.overlap = env_flag(p, v); return Status::ok(); }, true},
      {"overcommit", 'O', false, [](Parse& p, std::string_view v) { p.req.step.overcommit = env_flag(p, v); return Status::ok(); }},
      {"external-launcher", 0, false, [](Parse& p, std::string_view) {
         p.req.external_launcher = p.req.step.overlap = true;
         return Status::ok();
       }},
      {"job-name", 'J', true, [](Parse& p, std::string_view v) { p.req.job_name = v; return Status::ok(); }},
      {"output", 'o', true, [](Parse& p, std::string_view v) { p.req.output = v; return Status::ok(); }},
      {"error", 'e', true, [](Parse& p, std::string_view v) { p.req.error = v; return Status::ok(); }},
      {"input", 'i', true, [](Parse& p, std::string_view v) { p.req.input = v; return Status::ok(); }},
      {"label", 'l', false, [](Parse& p, std::string_view v) { p.req.label = env_flag(p, v); return Status::ok(); }},
      {"unbuffered", 'u', false, [](Parse& p, std::string_view v) { p.req.unbuffered = env_flag(p, v); return Status::ok(); }},
      {"kill-on-bad-exit", 'K', false, [](Parse& p, std::string_view v) {
         p.req.kill_on_bad_exit = v.empty() || (v != "0");
         return Status::ok();
       }, true},
      {"oom-kill-step", 0, false, [](Parse& p, std::string_view v) {
         if (!v.empty() && v != "0" && v != "1") return invalid("--oom-kill-step takes 0 or 1, not '" + std::string(v) + "'");
         p.req.oom_kill_step = v != "0";
         return Status::ok();
       }, true},
      {"wait", 'W', true, [](Parse& p, std::string_view v) { return set_count(p.req.wait_s, v, "--wait", 0); }},
      {"immediate", 'I', false, [](Parse& p, std::string_view v) {
         p.req.immediate_s = 0;
         return v.empty() ? Status::ok() : set_count(p.req.immediate_s, v, "--immediate", 0);
       }, true},
      {"mpi", 0, true, set_mpi},
      {"cpu-bind", 0, true, [](Parse& p, std::string_view v) {
         if (auto b = parse_cpu_bind(v); !b) return b.status();
         p.req.cpu_bind = v;
         return Status::ok();
       }},
      {"export", 0, true, [](Parse& p, std::string_view v) { p.req.export_spec = v; return Status::ok(); }},
      {"chdir", 'D', true, [](Parse& p, std::string_view v) { p.req.chdir = v; return Status::ok(); }},
      {"controller", 0, true, [](Parse& p, std::string_view v) { p.req.controller = v; return Status::ok(); }},
      {"ca", 0, true, [](Parse& p, std::string_view v) { p.req.ca_file = v; return Status::ok(); }},
      {"time", 't', true, set_time},
      {"mem", 0, true, set_mem},
      {"gpus", 'G', true, [](Parse& p, std::string_view v) { return set_count(p.req.gpus, v, "--gpus"); }},
      {"gpus-per-node", 0, true, [](Parse& p, std::string_view v) { return set_count(p.req.gpus_per_node, v, "--gpus-per-node"); }},
      {"gpus-per-task", 0, true, [](Parse& p, std::string_view v) { return set_count(p.req.gpus_per_task, v, "--gpus-per-task"); }},
      {"jobid", 0, true, [](Parse& p, std::string_view v) {
         auto id = parse_int(v, 1, INT64_MAX);
         if (!id) return invalid("Invalid job id \"" + std::string(v) + "\"");
         p.req.job_id = static_cast<uint64_t>(*id);
         return Status::ok();
       }},
      {"verbose", 'v', false, [](Parse& p, std::string_view) { ++p.req.verbose; return Status::ok(); }},
      {"quiet", 'Q', false, [](Parse& p, std::string_view) { p.req.quiet = true; return Status::ok(); }},
    };
    for (const InertOption& o : inert_srun_options()) t.push_back(inert_option(o));
    add_alias(t, "tasks-per-node", "ntasks-per-node");
    add_alias(t, "cpu_bind", "cpu-bind");
    rank_as_slurm(t, srun_getopt_names());
    return t;
  }();
  return table;
}

// srun's input environment: each variable stands for an option (srun(1) INPUT ENVIRONMENT).
constexpr std::pair<std::string_view, std::string_view> kEnvOptions[] = {
    {"SLURM_JOB_ID", "jobid"},          {"SLURM_NTASKS", "ntasks"},
    {"SLURM_NNODES", "nodes"},          {"SLURM_NTASKS_PER_NODE", "ntasks-per-node"},
    {"SLURM_CPUS_PER_TASK", "cpus-per-task"}, {"SLURM_DISTRIBUTION", "distribution"},
    {"SLURM_OVERLAP", "overlap"},       {"SLURM_EXACT", "exact"},
    {"SLURM_EXCLUSIVE", "exclusive"},   {"SLURM_OVERCOMMIT", "overcommit"},
    {"SLURM_MPI_TYPE", "mpi"},          {"SLURM_KILL_BAD_EXIT", "kill-on-bad-exit"},
    {"SLURM_OOM_KILL_STEP", "oom-kill-step"},
    {"SLURM_LABELIO", "label"},         {"SLURM_UNBUFFEREDIO", "unbuffered"},
    {"SLURM_WAIT", "wait"},             {"SLURM_CPU_BIND", "cpu-bind"},
    {"SLURM_EXPORT_ENV", "export"},     {"SLURM_TIMELIMIT", "time"},
};

Status apply_environment(Parse& p, const std::map<std::string, std::string>& env) {
  p.from_env = true;
  for (const auto& [var, option] : kEnvOptions) {
    auto it = env.find(std::string(var));
    if (it == env.end() && var == "SLURM_JOB_ID") it = env.find("SLURM_JOBID");
    if (it == env.end() || it->second.empty()) continue;
    for (const Option& o : srun_table())
      if (o.long_name == option)
        if (Status s = o.set(p, it->second); !s) return invalid(s.message() + " (from " + std::string(var) + ")");
  }
  p.from_env = false;
  return Status::ok();
}

// Inside a job, the allocation's options change nothing: told once each, as Slurm's srun
// would not act on them either (the job has its account, QOS, ... already).
void tell_allocation_options(SrunRequest& r) {
  for (const std::string& word : r.allocation_options)
    tell_once(r.warnings, word.substr(0, word.find('=')) + ": " + std::string(kInsideAJob));
  r.allocation_options.clear();
}

// Outside a job srun makes the allocation: its options are read as sbatch reads them, and
// what sbatch would tell (an option that does not act yet) srun tells.
Status read_allocation_options(SrunRequest& r) {
  if (r.allocation_options.empty()) return Status::ok();
  SubmitRequest job;
  std::vector<std::string> none;
  if (Status s = apply_submit_options(r.allocation_options, job, &none); !s) {
    if (job.option_error.fault != CliFault::kBadValue) return s;
    return invalid("Invalid --" + job.option_error.name + " specification");  // as Slurm's srun words it
  }
  r.allocation = std::move(job.spec);
  r.warnings.insert(r.warnings.end(), job.notices.begin(), job.notices.end());
  return Status::ok();
}

}  // namespace

MetaOption srun_meta_option(const std::vector<std::string>& args) { return find_meta_option(srun_table(), args); }

std::string srun_prefix_answer(std::string_view prefix) { return getopt_prefix_answer(srun_table(), prefix); }

Result<SrunRequest> parse_srun(const std::vector<std::string>& args, const std::map<std::string, std::string>& env) {
  Parse p;
  if (Status s = apply_environment(p, env); !s) return s;
  size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a.size() < 2 || a[0] != '-') break;  // the command: it and everything after it are its own
    if (Status s = apply_cli_option(srun_table(), args, i, p); !s) return s;
  }
  p.req.argv.assign(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
  if (p.req.job_id != 0) tell_allocation_options(p.req);
  else if (Status s = read_allocation_options(p.req); !s) return s;
  if (p.req.argv.empty() && p.req.mpi != "list") return invalid("No command given to execute.");
  // Tasks per node that cannot be (e.g. a batch job's SLURM_NTASKS_PER_NODE under srun -n3):
  // ignored, with Slurm's warning when there are more tasks than it allows per node.
  StepRequest& s = p.req.step;
  if (s.nodes_min > 0 && s.ntasks > 0 && s.ntasks_per_node > 0 && s.ntasks_per_node != s.ntasks / s.nodes_min) {
    if (s.ntasks > s.ntasks_per_node)
      p.req.warnings.push_back("can't honor --ntasks-per-node set to " + std::to_string(s.ntasks_per_node) +
                               " which doesn't match the requested tasks " + std::to_string(s.ntasks) +
                               " with the number of requested nodes " + std::to_string(s.nodes_min) +
                               ". Ignoring --ntasks-per-node.");
    s.ntasks_per_node = 0;
  }
  return p.req;
}

std::string mpi_types_list() {
  return "MPI plugin types are...\n\tnone\n\tpmi2\n\tpmix\nspecific pmix plugin versions available: pmix_v4\n";
}

}  // namespace hq
