// Job step views (see steps.hpp). One thread.
#include "cmd/client/steps.hpp"

#include <cerrno>
#include <cstring>
#include <ctime>
#include <optional>
#include <unistd.h>

#include "cmd/auth_client.hpp"
#include "cmd/client/output.hpp"
#include "cmd/client/srun_output.hpp"
#include "cmd/paths.hpp"
#include "core/std_streams.hpp"
#include "core/step_exit.hpp"
#include "core/units.hpp"
#include "net/frame.hpp"

namespace hq::cmd {
namespace {

std::string step_id(const pb::StepRecord& s) { return step_label(s.job_id(), s.step_id()); }

std::string ts(int64_t t) { return t > 0 ? format_timestamp(t) : "Unknown"; }

Result<pb::StepQueryReply> query_steps(const std::vector<uint64_t>& ids, bool include_ended) {
  auto client = connect_client();
  if (!client) return client.status();
  pb::Envelope env;
  for (uint64_t id : ids) env.mutable_step_query()->add_job_ids(id);
  env.mutable_step_query()->set_include_ended(include_ended);
  auto reply = (*client)->call(env);
  if (!reply) return reply.status();
  return reply->step_query_reply();
}

// scontrol show step's block (Slurm 22.05), plus the end for an ended step (hq show step).
void print_step(const pb::StepRecord& s) {
  bool batch = s.step_id() == kBatchStepId;
  hq::cout() << "StepId=" << step_id(s) << " UserId=" << s.uid() << " StartTime=" << ts(s.start_time())
            << " TimeLimit=UNLIMITED\n"
            << "   State=" << s.state() << " Partition=" << s.partition() << " NodeList=" << s.nodelist() << "\n";
  if (s.end_time() > 0)
    hq::cout() << "   EndTime=" << ts(s.end_time()) << " ExitCode=" << s.exit_code() << ":" << s.exit_signal() << "\n";
  hq::cout() << "   Nodes=" << s.nnodes() << " CPUs=" << s.ncpus() << " Tasks=" << s.ntasks() << " Name=" << s.name()
            << " Network=(null)\n"
            << "   TRES="
            << (batch ? std::string("(null)")
                      : "cpu=" + std::to_string(s.ncpus()) + ",mem=0,node=" + std::to_string(s.nnodes()))
            << "\n"
            << "   ResvPorts=(null)\n"
            << "   CPUFreqReq=Default" << (batch ? "" : " Dist=" + s.distribution()) << "\n"
            << "   SrunHost:Pid=" << (batch ? std::string("(null)") : s.srun_host()) << ":" << s.srun_pid() << "\n\n";
}

// "J", "J.S" or "J.batch".
struct StepName {
  uint64_t job = 0;
  bool any_step = true;
  uint32_t step = 0;
};

Result<StepName> parse_step_name(const std::string& text) {
  size_t dot = text.find('.');
  auto job = parse_int(text.substr(0, dot), 1, INT64_MAX);
  if (!job) return invalid("Invalid job id specified: " + text);
  StepName n{static_cast<uint64_t>(*job), true, 0};
  if (dot == std::string::npos) return n;
  std::string step = text.substr(dot + 1);
  auto id = step == "batch" ? Result<int64_t>(kBatchStepId) : parse_int(step, 0, UINT32_MAX);
  if (!id) return invalid("Invalid job step id specified: " + text);
  n.any_step = false;
  n.step = static_cast<uint32_t>(*id);
  return n;
}

Result<pb::NodeLocalReply> ask_node(const std::string& path, const std::string& what) {
  int fd = connect_unix(path);
  if (fd < 0) return unavailable("cannot reach the node agent at " + path + ": " + std::strerror(errno));
  pb::Envelope env;
  env.mutable_node_local_query()->set_what(what);
  if (!write_all(fd, net::encode_frame(env.SerializeAsString()))) {
    close(fd);
    return unavailable("the node agent at " + path + " closed the connection");
  }
  net::FrameDecoder decoder;
  char buf[65536];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    decoder.feed(buf, static_cast<size_t>(n));
    auto frame = decoder.next();
    if (!frame || !frame->has_value()) continue;
    close(fd);
    pb::Envelope reply;
    if (!reply.ParseFromString(**frame) || !reply.has_node_local_reply())
      return unavailable("the node agent at " + path + " gave no answer (an older agent?)");
    return reply.node_local_reply();
  }
  close(fd);
  return unavailable("the node agent at " + path + " closed the connection without an answer");
}

std::string dash(int32_t v) { return v < 0 ? "-" : std::to_string(v); }

}  // namespace

int show_steps(const std::string& prog, const std::vector<std::string>& names, bool json, bool ended) {
  std::vector<StepName> wanted;
  std::vector<uint64_t> ids;
  for (const auto& n : names) {
    auto s = parse_step_name(n);
    if (!s) return fail(prog, s.status());
    wanted.push_back(*s);
    ids.push_back(s->job);
  }
  auto reply = query_steps(ids, ended);
  if (!reply) return fail(prog, reply.status());
  if (reply->unknown_jobs_size() > 0) {
    hq::cerr() << "slurm_get_job_steps error: Invalid job id specified\n";
    return 1;
  }
  pb::StepQueryReply out;
  out.set_now(reply->now());
  for (const auto& s : reply->steps()) {
    bool match = wanted.empty();
    for (const auto& w : wanted) match |= w.job == s.job_id() && (w.any_step || w.step == s.step_id());
    if (match) *out.add_steps() = s;
  }
  if (out.steps_size() == 0 && wanted.size() == 1 && !wanted[0].any_step) {
    hq::cerr() << "Job step " << names[0] << " not found\n";
    return 1;
  }
  if (json) return print_json(out) ? 0 : 1;
  for (const auto& s : out.steps()) print_step(s);
  return 0;
}

int queue_steps(const std::string& prog, const std::vector<uint64_t>& job_ids, const std::vector<std::string>& names,
                bool header, bool long_format, bool json) {
  std::vector<StepName> wanted;
  std::vector<uint64_t> ids = job_ids;
  for (const auto& n : names) {
    auto s = parse_step_name(n);
    if (!s) return fail(prog, s.status());
    wanted.push_back(*s);
    if (job_ids.empty()) ids.push_back(s->job);
  }
  auto reply = query_steps(ids, false);
  if (!reply) return fail(prog, reply.status());
  std::vector<pb::StepRecord> steps;
  for (const auto& s : reply->steps()) {
    bool match = wanted.empty();
    for (const auto& w : wanted) match |= w.job == s.job_id() && (w.any_step || w.step == s.step_id());
    if (match) steps.push_back(s);
  }
  std::stable_sort(steps.begin(), steps.end(), [](const pb::StepRecord& a, const pb::StepRecord& b) {
    return a.job_id() != b.job_id() ? a.job_id() < b.job_id() : a.step_id() < b.step_id();
  });
  if (json) {
    pb::StepQueryReply out;
    out.set_now(reply->now());
    for (auto& s : steps) *out.add_steps() = s;
    return print_json(out) ? 0 : 1;
  }
  if (long_format) {
    time_t now = static_cast<time_t>(reply->now());
    char line[64] = "";
    struct tm local {};
    if (localtime_r(&now, &local)) strftime(line, sizeof line, "%a %b %e %H:%M:%S %Y", &local);
    hq::cout() << line << "\n";
  }
  if (header) hq::cout() << "         STEPID     NAME PARTITION     USER      TIME NODELIST\n";
  for (const auto& s : steps) {
    int64_t elapsed = s.start_time() > 0 ? std::max<int64_t>(0, reply->now() - s.start_time()) : 0;
    hq::cout() << field(step_id(s), 15) << " " << field(s.name(), 8) << " " << field(s.partition(), 9) << " "
              << field(s.user(), 8) << " " << field(format_elapsed(elapsed), 9) << " " << s.nodelist() << "\n";
  }
  return 0;
}

void print_job_steps(uint64_t job_id) {
  auto reply = query_steps({job_id}, true);
  if (!reply) return;
  for (const auto& s : reply->steps()) {
    hq::cout() << "   Step=" << step_id(s) << " Name=" << s.name() << " State=" << s.state();
    if (s.end_time() > 0) hq::cout() << " ExitCode=" << s.exit_code() << ":" << s.exit_signal();
    hq::cout() << " NodeList=" << s.nodelist() << " Tasks=" << s.ntasks() << " StartTime=" << ts(s.start_time());
    if (s.end_time() > 0) hq::cout() << " EndTime=" << ts(s.end_time());
    hq::cout() << "\n";
  }
}

int run_node_list(const std::string& what, const std::vector<std::string>& args) {
  std::string prog = "hq node list-" + what;
  bool json = false;
  std::string socket;
  std::optional<StepName> filter;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "-h" || args[i] == "--help") {
      hq::cout() << "usage: hq node list-jobs|list-steps|list-pids [J[.S]] [--json] [--socket PATH]\n"
                   "What runs on this node, from its agent (no controller needed): jobs, job steps, or\n"
                   "the pids of batch scripts and step tasks (as Slurm's scontrol listpids). You see your\n"
                   "own jobs; root sees all. PATH: the agent's step socket (default: $HQ_STEP_SOCKET, or\n"
                   "step.sock in this host's hq run directory).\n";
      return 0;
    }
    if (args[i] == "--json") json = true;
    else if (args[i] == "--socket" && i + 1 < args.size()) socket = args[++i];
    else if (auto f = parse_step_name(args[i]); f && !filter) filter = *f;
    else return fail(prog, invalid("unknown argument '" + args[i] + "'"));
  }
  if (socket.empty()) {
    const char* env = getenv("HQ_STEP_SOCKET");
    std::string auth = find_auth_socket();
    socket = env && *env ? env : auth.substr(0, auth.rfind('/') + 1) + "step.sock";
  }
  auto reply = ask_node(socket, what);
  if (!reply) return fail(prog, reply.status());
  if (filter) {
    auto* entries = reply->mutable_entries();
    for (int i = entries->size() - 1; i >= 0; --i) {
      const auto& e = entries->Get(i);
      std::string step = filter->step == kBatchStepId ? "batch" : std::to_string(filter->step);
      if (e.job_id() != filter->job || (!filter->any_step && e.step() != step)) entries->DeleteSubrange(i, 1);
    }
  }
  if (json) return print_json(*reply) ? 0 : 1;
  if (what == "pids") {
    hq::cout() << "PID      JOBID    STEPID   LOCALID GLOBALID\n";
    for (const auto& e : reply->entries())
      hq::cout() << field(std::to_string(e.pid()), 8, false) << " " << field(std::to_string(e.job_id()), 8, false) << " "
                << field(e.step(), 8, false) << " " << field(dash(e.local_id()), 7, false) << " " << dash(e.global_id())
                << "\n";
  } else if (what == "steps") {
    hq::cout() << "JOBID    STEPID   UID      TASKS NAME\n";
    for (const auto& e : reply->entries())
      hq::cout() << field(std::to_string(e.job_id()), 8, false) << " " << field(e.step(), 8, false) << " "
                << field(std::to_string(e.uid()), 8, false) << " " << field(std::to_string(e.ntasks()), 5, false) << " "
                << e.name() << "\n";
  } else {
    hq::cout() << "JOBID    UID      STEPS NAME\n";
    for (const auto& e : reply->entries())
      hq::cout() << field(std::to_string(e.job_id()), 8, false) << " " << field(std::to_string(e.uid()), 8, false) << " "
                << field(std::to_string(e.steps()), 5, false) << " " << e.name() << "\n";
  }
  if (reply->entries_size() == 0 && what != "jobs") hq::cerr() << "No job steps exist on this node.\n";
  return 0;
}

}  // namespace hq::cmd
