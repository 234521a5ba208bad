// `hq show job|node|partition [NAME] [--json]` and the scontrol alias, in scontrol's
// "Key=Value" layout.
#include <cctype>
#include <cstdio>
#include <unistd.h>
#include <set>
#include <thread>

#include "cmd/client/job_query.hpp"
#include "cmd/client/output.hpp"
#include "cmd/client/partition_text.hpp"
#include "cmd/client/queue_format.hpp"
#include "cmd/client/steps.hpp"
#include "cmd/commands.hpp"
#include "cmd/paths.hpp"
#include "cmd/users.hpp"
#include "core/hardware.hpp"
#include "core/hostlist.hpp"
#include "core/std_streams.hpp"
#include "core/topology.hpp"
#include "core/units.hpp"

namespace hq::cmd {
namespace {

// Slurm's Reason=: the StateDesc when there is one (white space made '_', for parsers), else the reason's name.
std::string shown_reason(const pb::Job& j) {
  std::string out = j.state_desc().empty() ? j.reason() : j.state_desc();
  for (char& c : out)
    if (std::isspace(static_cast<unsigned char>(c))) c = '_';
  return out;
}

std::string ts(int64_t t) { return t > 0 ? format_timestamp(t) : "Unknown"; }
std::string limit(int64_t s) { return s < 0 ? "UNLIMITED" : format_limit(s); }

// Slurm's TresPerJob / TresPerNode / TresPerTask line for a GPU request; "" without one.
std::string gpu_request(const pb::JobSpec& s) {
  std::string gpu = "gres/gpu:" + (s.gpu_type().empty() ? "" : s.gpu_type() + ":");
  if (s.gpus() > 0) return "TresPerJob=" + gpu + std::to_string(s.gpus());
  if (s.gpus_per_node() > 0) return "TresPerNode=" + gpu + std::to_string(s.gpus_per_node());
  if (s.gpus_per_task() > 0) return "TresPerTask=" + gpu + std::to_string(s.gpus_per_task());
  return "";
}

// scontrol show job -d's per-node lines, for jobs holding GPUs.
void print_gpu_allocs(TextOut& out, const pb::Job& j) {
  for (const auto& a : j.alloc()) {
    if (a.gpus_size() == 0) continue;
    std::vector<int32_t> idx(a.gpus().begin(), a.gpus().end());
    out << "     Nodes=" << a.node() << " CPUs=" << a.cpus() << " Mem=" << a.mem_mib() << " GRES=gpu:"
              << idx.size() << "(IDX:" << format_cpulist(idx) << ")\n";
  }
}

// What the job holds (running or ended) or asks for (pending), as Slurm's TRES= line.
std::string tres(const pb::Job& j, int cpus, int nodes) {
  int64_t mem = 0;
  int gpus = 0;
  for (const auto& a : j.alloc()) {
    mem += a.mem_mib();
    gpus += a.gpus_size();
  }
  const auto& s = j.spec();
  if (j.alloc_size() == 0) {
    mem = s.mem_per_node_mib() > 0 ? s.mem_per_node_mib() * nodes : s.mem_per_cpu_mib() * cpus;
    gpus = s.gpus() > 0 ? s.gpus() : s.gpus_per_node() * nodes + s.gpus_per_task() * s.ntasks();
  }
  std::string out = "cpu=" + std::to_string(cpus);
  if (mem > 0) out += ",mem=" + format_size_mib(mem);
  out += ",node=" + std::to_string(nodes) + ",billing=" + std::to_string(cpus);
  if (gpus > 0) out += ",gres/gpu=" + std::to_string(gpus);
  return out;
}

// EndTime=: the end, a running job's start + limit, and as Slurm 22.05 a pending job's
// expected start + limit once that start is known; 0 (Unknown) otherwise.
int64_t shown_end_time(const pb::Job& j, int64_t now) {
  if (int64_t end = job_end_time(j); end > 0 || j.state() != "PENDING") return end;
  int64_t start = job_start_time(j, now);
  return start > 0 && j.time_limit() > 0 ? start + j.time_limit() : 0;
}

// LastSchedEval=: hq keeps no time of the last look at a job; its start, else its submission.
int64_t last_sched_eval(const pb::Job& j) { return j.start_time() > 0 ? j.start_time() : j.submit_time(); }

// `tasks`: the array's pending tasks this record stands for (scontrol's ArrayTaskId=0-30:3%4).
// Made as text, then printed (print_text): through the standard streams it would build them
// first, 0.2 ms of an `scontrol show job` (core/std_streams.hpp).
void print_job(const pb::Job& j, int64_t now, const std::string& tasks = "") {
  TextOut out;
  const auto& s = j.spec();
  int64_t run = job_run_time(j, now);
  int cpus = 0;
  for (const auto& a : j.alloc()) cpus += a.cpus();
  if (j.alloc_size() == 0) cpus = s.ntasks() * s.cpus_per_task();
  int nodes = std::max(j.alloc_size(), s.nodes_min());
  out << "JobId=" << j.job_id();
  if (j.array_job_id()) {
    out << " ArrayJobId=" << j.array_job_id() << " ArrayTaskId=" << (tasks.empty() ? std::to_string(j.array_task_id()) : tasks);
    if (j.array_throttle() > 0) out << " ArrayTaskThrottle=" << j.array_throttle();
  }
  bool pending = j.state() == "PENDING";
  out << " JobName=" << s.name() << "\n"
            << "   UserId=" << s.user() << "(" << s.uid() << ") GroupId=" << group_name(s.gid()) << "(" << s.gid()
            << ") MCS_label=N/A\n"
            << "   Priority=" << job_priority(j) << " Nice=" << s.nice() << " Account=" << or_null(s.account())
            << " QOS=" << or_null(s.qos()) << "\n"
            << "   JobState=" << job_state(j) << " Reason=" << shown_reason(j) << " Dependency=" << or_null(s.dependency()) << "\n"
            << "   Requeue=" << (s.requeue() == 0 ? 0 : 1) << " Restarts=" << j.restart_count()
            << " BatchFlag=" << (s.alloc_kind() == 0 ? 1 : 0) << " Reboot=0 ExitCode=" << j.exit_code() << ":"
            << j.exit_signal() << "\n"
            << "   RunTime=" << format_limit(run) << " TimeLimit=" << limit(j.time_limit())
            << " TimeMin=" << (s.time_min() > 0 ? format_limit(s.time_min()) : "N/A") << "\n"
            << "   SubmitTime=" << ts(j.submit_time()) << " EligibleTime=" << ts(j.hold() ? 0 : j.eligible_time()) << "\n"
            << "   AccrueTime=" << ts(j.hold() && pending ? 0 : j.eligible_time()) << "\n"
            << "   StartTime=" << ts(job_start_time(j, now)) << " EndTime=" << ts(shown_end_time(j, now))
            << " Deadline=" << (s.deadline() > 0 ? ts(s.deadline()) : "N/A") << "\n"
            << "   SuspendTime=" << (j.suspend_time() > 0 ? ts(j.suspend_time()) : "None")
            << " SecsPreSuspend=" << j.pre_suspend_secs() << " LastSchedEval=" << ts(last_sched_eval(j))
            << " Scheduler=Main\n"
            << "   Partition=" << (j.partition().empty() ? s.partition() : j.partition())
            << " AllocNode:Sid=" << or_null(s.submit_host()) << ":0\n"
            << (s.reservation().empty() ? "" : "   Reservation=" + s.reservation() + "\n")
            << "   ReqNodeList=" << or_null(s.nodelist()) << " ExcNodeList=" << or_null(s.exclude()) << "\n"
            << "   NodeList=" << j.nodelist() << "\n";
  if (!pending && j.alloc_size() > 0 && s.alloc_kind() == 0) out << "   BatchHost=" << j.alloc(0).node() << "\n";
  out << "   NumNodes=" << nodes << " NumCPUs=" << cpus << " NumTasks=" << s.ntasks()
            << " CPUs/Task=" << s.cpus_per_task() << " ReqB:S:C:T=0:0:*:*\n"
            << "   TRES=" << tres(j, cpus, nodes) << "\n"
            << "   Socks/Node=* NtasksPerN:B:S:C=" << s.ntasks_per_node() << ":0:*:* CoreSpec=*\n"
            << "   MinCPUsNode=" << s.cpus_per_task() << " "
            << (s.mem_per_cpu_mib() > 0 ? "MinMemoryCPU=" + format_size_mib(s.mem_per_cpu_mib())
                                        : "MinMemoryNode=" + (s.mem_per_node_mib() > 0 ? format_size_mib(s.mem_per_node_mib()) : std::string("0")))
            << " MinTmpDiskNode=0\n"
            << "   Features=" << or_null(s.constraint()) << " DelayBoot=00:00:00\n"
            << "   OverSubscribe=" << (s.exclusive_topo() ? "TOPO" : s.exclusive() ? "NO" : "OK") << " Contiguous=0 Licenses=(null) Network=(null)\n";
  if (pending && (j.expected_start() > 0 || !j.sched_nodes().empty()))
    out << "   ExpectedStart=" << ts(j.expected_start()) << " SchedNodeList=" << or_null(j.sched_nodes()) << "\n";
  if (std::string g = gpu_request(s); !g.empty()) {
    out << "   " << g << (s.cpus_per_gpu() ? " CpusPerTres=gres/gpu:" + std::to_string(s.cpus_per_gpu()) : "")
              << (s.mem_per_gpu_mib() ? " MemPerTres=gres/gpu:" + std::to_string(s.mem_per_gpu_mib()) : "") << "\n";
    print_gpu_allocs(out, j);
  }
  if (j.has_peak_mem_bytes() || j.has_cpu_time_usec()) {  // measured at the end by the node
    int64_t usec = j.cpu_time_usec();
    char cpu[32];
    std::snprintf(cpu, sizeof cpu, ".%03lld", static_cast<long long>(usec % 1000000 / 1000));
    out << "   MaxRSS=" << (j.has_peak_mem_bytes() ? std::to_string(j.peak_mem_bytes() / 1024) + "K" : "Unknown")
              << " TotalCPU=" << (j.has_cpu_time_usec() ? format_limit(usec / 1000000) + cpu : "Unknown") << "\n";
  }
  out << "   Command=" << or_null(s.command()) << "\n"
            << "   WorkDir=" << s.workdir() << "\n";
  if (!s.comment().empty()) out << "   Comment=" << s.comment() << " \n";
  if (s.alloc_kind() == 0)
    out << "   StdErr=" << job_stdio(j, 'e') << "\n"
              << "   StdIn=" << job_stdio(j, 'i') << "\n"
              << "   StdOut=" << job_stdio(j, 'o') << "\n";
  if (s.segment() > 0) out << "   SegmentSize=" << s.segment() << "\n";
  if (s.switches() > 0) out << "   Switches=" << s.switches() << "@" << format_limit(std::max<int64_t>(0, s.switch_wait())) << "\n";
  out << "   Power=\n";
  if (!s.mail_type().empty())
    out << "   MailUser=" << (s.mail_user().empty() ? s.user() : s.mail_user()) << " MailType=" << s.mail_type() << "\n";
  if (j.has_factors()) {
    const auto& f = j.factors();
    char line[256];
    std::snprintf(line, sizeof line,
                  "   PriorityFactors: Age=%.4f JobSize=%.4f Partition=%.4f QOS=%.4f FairShare=%.4f Nice=%lld Total=%lld\n",
                  f.age(), f.job_size(), f.partition(), f.qos(), f.fairshare(), static_cast<long long>(f.nice()),
                  static_cast<long long>(f.total()));
    out << line;
  }
  out << "   \n\n";  // Slurm 22.05 closes a job's record with an empty indented line
  print_text(out.text());
}

void print_node(const pb::Node& n) {
  std::string parts;
  for (const auto& p : n.partitions()) parts += (parts.empty() ? "" : ",") + p;
  std::string feats;
  for (const auto& f : n.features()) feats += (feats.empty() ? "" : ",") + f;
  hq::cout() << "NodeName=" << n.name() << "\n"
            << "   CPUAlloc=" << n.alloc_cpus() << " CPUTot=" << n.cpus() << "\n"
            << "   RealMemory=" << n.mem_mib() << " AllocMem=" << n.alloc_mem_mib() << "\n"
            << "   AvailableFeatures=" << (feats.empty() ? "(null)" : feats) << "\n"
            << "   ActiveFeatures=" << (feats.empty() ? "(null)" : feats) << "\n"
            << "   State=" << n.state() << (n.blocked() && n.state() == "IDLE" ? "+BLOCKED" : "") << (n.responding() ? "" : "+NOT_RESPONDING") << " Weight=" << n.weight()
            << " Owner=N/A MCS_label=N/A\n"
            << "   Partitions=" << parts << "\n"
            << (n.block().empty() && n.switch_name().empty()
                    ? std::string()
                    : "   Block=" + (n.block().empty() ? std::string("(null)") : n.block()) + " Switch=" +
                          (n.switch_name().empty() ? std::string("(null)") : n.switch_name()) + "\n")
            << "   Gres=" << (n.gres().empty() ? "(null)" : n.gres()) << "\n"
            << "   GresUsed=" << (n.gres_used().empty() ? "(null)" : n.gres_used()) << "\n"
            << "   CfgTRES=cpu=" << n.cpus() << ",mem=" << n.mem_mib() << "M"
            << (n.gpus() ? ",gres/gpu=" + std::to_string(n.gpus()) : "") << "\n"
            << "   AllocTRES=" << (n.alloc_cpus() ? "cpu=" + std::to_string(n.alloc_cpus()) + ",mem=" +
                                                       std::to_string(n.alloc_mem_mib()) + "M" +
                                                       (n.alloc_gpus() ? ",gres/gpu=" + std::to_string(n.alloc_gpus()) : "")
                                                 : std::string()) << "\n"
            << "   LastBusyTime=" << ts(n.last_heard()) << " BootTime=" << ts(n.boot_time()) << "\n"
            << "   Reason=" << (n.reason().empty() ? "(null)" : n.reason()) << "\n\n";
}

int show_job(const std::string& prog, const std::vector<std::string>& names, bool json) {
  pb::QueueRequest request;
  auto* q = &request;
  q->set_include_finished(true);
  q->set_with_priority(true);
  auto named = parse_job_id_args(names);
  if (!named) return fail(prog, named.status());
  add_named_jobs(*q, *named);
  auto client = connect_client();
  if (!client) return fail(prog, client.status());
  auto reply = query_jobs(**client, *q);
  if (!reply) return fail(prog, reply.status());
  keep_named_tasks(reply.value(), *named);
  const pb::QueueReply& r = *reply;
  if (!names.empty() && r.jobs_size() == 0) {
    if (prog == "scontrol") return hq::cerr() << "slurm_load_jobs error: Invalid job id specified\n", 1;  // Slurm's line
    return fail(prog, not_found("Invalid job id specified"));
  }
  if (json) return print_json(r) ? 0 : 1;
  if (prog == "scontrol") {  // an array's pending tasks are one record, as Slurm's
    for (const QueueRow& row : queue_rows(r, false)) print_job(*row.job, r.now(), row.tasks);
    return 0;
  }
  for (const auto& j : r.jobs()) {
    print_job(j, r.now());
    if (!names.empty()) print_job_steps(j.job_id());  // hq show job: its steps
  }
  return 0;
}

int show_nodes_or_partitions(const std::string& prog, bool partitions, const std::vector<std::string>& names, bool json) {
  auto client = connect_client();
  if (!client) return fail(prog, client.status());
  auto reply = query_nodes(**client);
  if (!reply) return fail(prog, reply.status());
  const pb::NodesReply& r = *reply;
  auto wanted = [&](const std::string& n) { return names.empty() || std::find(names.begin(), names.end(), n) != names.end(); };
  pb::NodesReply out;
  for (const auto& n : r.nodes()) if (!partitions && wanted(n.name())) *out.add_nodes() = n;
  for (const auto& p : r.partitions()) if (partitions && wanted(p.name())) *out.add_partitions() = p;
  if (out.nodes_size() + out.partitions_size() == 0 && !names.empty())
    return fail(prog, not_found((partitions ? "Partition " : "Node ") + names[0] + " not found"));
  if (json) return print_json(out) ? 0 : 1;
  for (const auto& n : out.nodes()) print_node(n);
  for (const auto& p : out.partitions()) hq::cout() << partition_text(p, r);
  return 0;
}

// scontrol show topology [NAME] [node=NODES] [unit=|block=|switch=UNIT] (Slurm 25.05): the
// controller's lines (core/topology) of topology NAME, or of the cluster default where NAME
// names no topology (then NAME is a block, switch or node: Slurm 22.05-24.11's form); Slurm's
// words when there are none.
int show_topology(const std::string& prog, const std::vector<std::string>& args) {
  std::string name;
  std::vector<std::string> filters;
  for (const auto& a : args) {
    size_t eq = a.find('=');
    std::string key = eq == std::string::npos ? "" : to_lower(a.substr(0, eq));
    if (eq == std::string::npos && name.empty()) name = a;
    else if (eq == std::string::npos)
      return fail(prog, invalid("Too many arguments (" + a + "), the topology name (" + name + ") is already defined"));
    else if (key == "node" || key == "nodes" || key == "unit" || key == "block" || key == "switch") filters.push_back(a.substr(eq + 1));
    else return fail(prog, invalid("Unknown argument " + a));
  }
  auto client = connect_client();
  if (!client) return fail(prog, client.status());
  auto reply = query_nodes(**client, false, true, name);
  if (!reply) return fail(prog, reply.status());
  std::vector<std::string> lines(reply->topology().begin(), reply->topology().end());
  if (lines.empty()) {
    hq::cerr() << prog << ": error: No topology information available\n";
    return 0;
  }
  if (!name.empty() && name != reply->topology_name()) filters.insert(filters.begin(), name);
  for (const std::string& f : filters) {
    bool tree = lines.front().rfind("SwitchName=", 0) == 0;
    lines = topology_lines_matching(lines, f);
    if (lines.empty() && tree) {  // Slurm 22.05's tree plugin: said, and exit 0
      hq::cerr() << prog << ": error: Topology information contains no switch or node named " << f << "\n";
      return 0;
    }
    if (lines.empty()) return fail(prog, invalid("Topology information contains no block or node named " + f));
  }
  for (const auto& line : lines) hq::cout() << line << "\n";
  return 0;
}

int show_hosts(const std::string& prog, const std::string& what, const std::vector<std::string>& names) {
  std::string expr;
  for (const auto& n : names) expr += (expr.empty() ? "" : ",") + n;
  if (expr.empty()) if (const char* e = std::getenv("SLURM_NODELIST")) expr = e;
  auto hosts = expand_hostlist(expr);
  if (!hosts) return fail(prog, hosts.status());
  if (what == "hostnames") for (const auto& h : *hosts) hq::cout() << h << "\n";
  else hq::cout() << compress_hostlist(*hosts, what == "hostlistsorted" ? HostlistOrder::kSorted : HostlistOrder::kAsGiven) << "\n";
  return 0;
}

}  // namespace

int run_show(const Args& args) {
  std::string prog = prog_name(args[0]);
  std::vector<std::string> rest;
  bool json = false;
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--json") json = true;
    else rest.push_back(args[i]);
  }
  if (rest.empty() || rest[0] == "-h" || rest[0] == "--help") {
    hq::cout() << "usage: hq show job|step|node|partition [NAME...] [--json]   (step: J, J.S or J.batch)\n"
                 "       hq show topology [TOPOLOGY|BLOCK|NODE] [node=NODES] [unit=BLOCK|SWITCH]\n"
                 "       hq show hostnames|hostlist|hostlistsorted EXPR\n";
    return rest.empty() ? 2 : 0;
  }
  std::string what = rest[0];
  std::vector<std::string> names(rest.begin() + 1, rest.end());
  if (what == "job" || what == "jobs") return show_job(prog, names, json);
  if (what == "node" || what == "nodes") return show_nodes_or_partitions(prog, false, names, json);
  if (what == "step" || what == "steps") return show_steps(prog, names, json, prog != "scontrol");
  if (what == "partition" || what == "partitions") return show_nodes_or_partitions(prog, true, names, json);
  if (what == "hostnames" || what == "hostlist" || what == "hostlistsorted") return show_hosts(prog, what, names);
  if (what == "topology") return show_topology(prog, names);
  return fail(prog, invalid("unknown entity '" + what + "' (job, step, node, partition, topology, hostnames, hostlist)"));
}

}  // namespace hq::cmd
