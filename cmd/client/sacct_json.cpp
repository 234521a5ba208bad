#include "cmd/client/sacct_json.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <tuple>

#include "cmd/client/sacct_rows.hpp"
#include "cmd/client/slurm_tree.hpp"
#include "cmd/client/slurm_yaml.hpp"
#include "cmd/users.hpp"
#include "core/hostlist.hpp"
#include "core/units.hpp"

namespace hq::cmd {
namespace {

using google::protobuf::ListValue;
using google::protobuf::Struct;

// The order Slurm 22.05's sacct --json writes each mapping's keys in, by the key it sits
// under (qualified by the one above where a name comes twice); hq's own "hq" last.
const KeyOrder& sacct_key_order() {
  static const KeyOrder order{{
      {"", {"meta", "errors", "jobs"}},
      {"meta", {"plugin", "Slurm"}},
      {"meta/plugin", {"type", "name"}},
      {"meta/Slurm", {"version", "release"}},
      {"Slurm/version", {"major", "micro", "minor"}},
      {"jobs",
       {"account", "comment", "allocation_nodes", "array", "association", "cluster", "constraints", "container",
        "derived_exit_code", "time", "exit_code", "flags", "group", "het", "job_id", "name", "mcs", "nodes",
        "partition", "priority", "qos", "required", "kill_request_user", "reservation", "state", "steps", "tres",
        "user", "wckey", "working_directory"}},
      {"jobs/comment", {"administrator", "job", "system"}},
      {"jobs/array", {"job_id", "limits", "task", "task_id"}},
      {"jobs/association", {"account", "cluster", "partition", "user"}},
      {"jobs/time",
       {"elapsed", "eligible", "end", "start", "submission", "suspended", "system", "limit", "total", "user"}},
      {"jobs/het", {"job_id", "job_offset"}},
      {"jobs/required", {"CPUs", "memory"}},
      {"jobs/reservation", {"id", "name"}},
      {"jobs/state", {"current", "reason"}},
      {"jobs/tres", {"allocated", "requested"}},
      {"jobs/wckey", {"wckey", "flags"}},
      {"jobs/steps",
       {"nodes", "tres", "time", "exit_code", "tasks", "pid", "CPU", "kill_request_user", "state", "statistics", "step",
        "task"}},
      {"steps/nodes", {"list", "count", "range"}},
      {"steps/tres", {"requested", "consumed", "allocated"}},
      {"steps/time", {"elapsed", "end", "start", "suspended", "system", "total", "user"}},
      {"steps/CPU", {"requested_frequency", "governor"}},
      {"steps/statistics", {"CPU", "energy"}},
      {"steps/step", {"job_id", "het", "id", "name"}},
      {"exit_code", {"status", "return_code", "signal"}},
      {"derived_exit_code", {"status", "return_code", "signal"}},
      {"exit_code/signal", {"signal_id", "name"}},
      {"derived_exit_code/signal", {"signal_id", "name"}},
      {"tres/requested", {"type", "name", "id", "count", "max", "min", "average", "total"}},
      {"tres/consumed", {"max", "min", "average", "total"}},
      {"tres/allocated", {"type", "name", "id", "count"}},
      {"time/system", {"seconds", "microseconds"}},
      {"time/total", {"seconds", "microseconds"}},
      {"time/user", {"seconds", "microseconds"}},
      {"array/limits", {"max"}},
      {"CPU/requested_frequency", {"min", "max"}},
  }};
  return order;
}

int64_t number(const std::string& text) { return std::strtoll(text.c_str(), nullptr, 10); }

// A size as sacct writes it ("1000M", "4G", "0") in MiB.
int64_t mib(const std::string& text) {
  auto size = parse_size_mib(text);
  return size ? *size : 0;
}

// "CODE:SIGNAL" (sacct's ExitCode) as Slurm's exit code object: SUCCESS or FAILED with the
// code, SIGNALED with the signal's number and name.
void exit_code(Obj o, const std::string& text) {
  size_t colon = text.find(':');
  int64_t code = number(text.substr(0, colon));
  int64_t sig = colon == std::string::npos ? 0 : number(text.substr(colon + 1));
  if (sig != 0) {
    o.str("status", "SIGNALED").null("return_code");
    o.obj("signal").num("signal_id", static_cast<double>(sig)).str("name", ::strsignal(static_cast<int>(sig)));
    return;
  }
  o.str("status", code == 0 ? "SUCCESS" : "FAILED").num("return_code", static_cast<double>(code));
}

// Slurm's TRES ids and names: cpu 1, mem 2, node 4, billing 5, gres/NAME from 1001.
std::tuple<int, std::string, std::string> tres_kind(const std::string& key) {
  if (key == "cpu") return {1, "cpu", ""};
  if (key == "mem") return {2, "mem", ""};
  if (key == "node") return {4, "node", ""};
  if (key == "billing") return {5, "billing", ""};
  if (key.rfind("gres/", 0) == 0) return {1001, "gres", key.substr(5)};
  return {2000, key, ""};
}

// A TRES text ("billing=1,cpu=1,mem=1000M,node=1") as Slurm's list of {type, name, id,
// count}, by id; memory in MiB.
void tres_list(ListValue* out, const std::string& text) {
  std::vector<std::tuple<int, std::string, std::string, int64_t>> items;
  for (const auto& item : split(text, ',')) {
    size_t eq = item.find('=');
    if (eq == std::string_view::npos) continue;
    auto [id, type, name] = tres_kind(std::string(item.substr(0, eq)));
    std::string value(item.substr(eq + 1));
    items.emplace_back(id, type, name, id == 2 ? mib(value) : number(value));
  }
  std::sort(items.begin(), items.end());
  for (const auto& [id, type, name, count] : items) {
    Obj t = Obj::item(out);
    t.str("type", type).num("id", id).num("count", static_cast<double>(count));
    if (name.empty()) t.null("name");
    else t.str("name", name);
  }
}

void seconds(Obj o, int64_t usec) {
  o.num("seconds", static_cast<double>(usec / 1000000)).num("microseconds", static_cast<double>(usec % 1000000));
}

// The fields a step has in Slurm's record whatever it ran: frequencies, statistics, no pid.
void step_constants(Obj s) {
  for (const char* side : {"requested", "consumed"}) {
    Obj usage = s.obj("tres").obj(side);
    for (const char* k : {"max", "min", "average", "total"}) usage.list(k);
  }
  s.null("pid").null("kill_request_user");
  Obj cpu = s.obj("CPU");
  cpu.obj("requested_frequency").num("min", 0).num("max", 0);
  cpu.list("governor");
  Obj stats = s.obj("statistics");
  stats.obj("CPU").num("actual_frequency", 0);
  stats.obj("energy").num("consumed", 0);
}

// One of a job's steps (its batch script's when `row.step` is null).
void add_step(Obj s, const SacctRow& row) {
  auto value = [&](std::string_view name) { return sacct_value(row, name); };
  step_constants(s);
  std::string nodes = value("NodeList");
  Obj n = s.obj("nodes");
  auto names = expand_hostlist(nodes);
  ListValue* list = n.list("list");
  if (names)
    for (const auto& name : *names) list->add_values()->set_string_value(name);
  n.num("count", static_cast<double>(number(value("NNodes")))).str("range", nodes);
  tres_list(s.obj("tres").list("allocated"), value("AllocTRES"));
  Obj t = s.obj("time");
  int64_t start = row.step ? row.step->start_time() : row.job.start_time();
  int64_t end = row.step ? row.step->end_time() : row.job.end_time();
  t.num("elapsed", static_cast<double>(number(value("ElapsedRaw")))).num("end", static_cast<double>(end));
  t.num("start", static_cast<double>(start)).num("suspended", 0);
  int64_t cpu = row.step ? (row.step->has_total_cpu_usec() ? row.step->total_cpu_usec() : 0)
                         : (row.job.has_cpu_time_usec() ? row.job.cpu_time_usec() : 0);
  seconds(t.obj("system"), 0), seconds(t.obj("total"), cpu), seconds(t.obj("user"), 0);
  exit_code(s.obj("exit_code"), value("ExitCode"));
  s.obj("tasks").num("count", static_cast<double>(number(value("NTasks"))));
  s.str("state", value("State"));
  Obj id = s.obj("step");
  id.num("job_id", static_cast<double>(row.job.job_id())).obj("het").null("component");
  if (row.step) id.num("id", row.step->step_id()).str("name", row.step->name());
  else id.str("id", "batch").str("name", "batch");
  std::string layout = row.step ? row.step->distribution() : "";
  s.obj("task").str("distribution", layout.empty() ? "Unknown" : layout);
}

// The job's first word of State ("CANCELLED by 0" -> CANCELLED) and who cancelled it.
void job_state(Obj j, const std::string& state, const std::string& reason) {
  std::string current = state.substr(0, state.find(' '));
  j.obj("state").str("current", current).str("reason", reason.empty() ? "None" : reason);
  if (auto by = state.find(" by "); by != std::string::npos)
    j.str("kill_request_user", user_name(static_cast<uint32_t>(number(state.substr(by + 4)))));
  else
    j.null("kill_request_user");
}

void job_time(Obj t, const pb::Job& job, const SacctRow& row) {
  t.num("elapsed", static_cast<double>(number(sacct_value(row, "ElapsedRaw"))));
  t.num("eligible", static_cast<double>(job.eligible_time())).num("end", static_cast<double>(job.end_time()));
  t.num("start", static_cast<double>(job.start_time())).num("submission", static_cast<double>(job.submit_time()));
  t.num("suspended", static_cast<double>(job.suspended_secs()));
  if (job.time_limit() > 0) t.num("limit", static_cast<double>(job.time_limit() / 60));
  else t.null("limit");
  seconds(t.obj("system"), 0), seconds(t.obj("user"), 0);
  seconds(t.obj("total"), job.has_cpu_time_usec() ? job.cpu_time_usec() : 0);
}

void add_job(Obj j, const SacctRecord& r, const std::string& cluster, int64_t now, bool with_steps) {
  const pb::Job& job = *r.job;
  SacctRow row{job, false, cluster, now};
  row.derived_exit_code = sacct_derived_exit(r.steps);
  row.array_tasks = r.array_tasks;
  auto value = [&](std::string_view name) { return sacct_value(row, name); };
  const pb::JobSpec& s = job.spec();
  std::string account = value("Account"), user = value("User");
  j.str("account", account).str("cluster", cluster).str("constraints", s.constraint()).null("container");
  Obj comment = j.obj("comment");
  comment.null("administrator").null("system");
  if (s.comment().empty()) comment.null("job");
  else comment.str("job", s.comment());
  j.num("allocation_nodes", static_cast<double>(number(value("AllocNodes"))));
  Obj array = j.obj("array");
  array.num("job_id", static_cast<double>(job.array_job_id()));
  array.obj("limits").obj("max").obj("running").num("tasks", std::max(0, job.array_throttle()));
  if (!r.array_tasks.empty()) array.str("task", r.array_tasks).null("task_id");
  else if (job.array_job_id()) array.null("task").num("task_id", job.array_task_id());
  else array.null("task").null("task_id");
  j.obj("association").str("account", account).str("cluster", cluster).null("partition").str("user", user);
  exit_code(j.obj("derived_exit_code"), row.derived_exit_code);
  exit_code(j.obj("exit_code"), value("ExitCode"));
  job_time(j.obj("time"), job, row);
  auto* flags = j.list("flags");
  flags->add_values()->set_string_value("CLEAR_SCHEDULING");
  if (job.start_time() > 0) flags->add_values()->set_string_value("STARTED_ON_SCHEDULE");
  j.str("group", value("Group")).num("job_id", static_cast<double>(job.job_id())).str("name", s.name());
  j.obj("het").num("job_id", 0).null("job_offset");
  j.obj("mcs").str("label", "");
  j.str("nodes", value("NodeList")).str("partition", job.partition());
  j.num("priority", static_cast<double>(job.priority())).str("qos", value("QOS"));
  Obj required = j.obj("required");
  required.num("CPUs", static_cast<double>(number(value("ReqCPUS"))));
  required.num("memory", static_cast<double>(mib(value("ReqMem"))));
  Obj resv = j.obj("reservation");
  resv.num("id", 0);
  if (s.reservation().empty()) resv.num("name", 0);  // as Slurm 22.05 prints no reservation
  else resv.str("name", s.reservation());
  job_state(j, value("State"), value("Reason"));
  tres_list(j.obj("tres").list("allocated"), value("AllocTRES"));
  tres_list(j.obj("tres").list("requested"), value("ReqTRES"));
  j.str("user", user).str("working_directory", s.workdir());
  Obj wckey = j.obj("wckey");
  wckey.str("wckey", s.wckey()).list("flags");
  ListValue* steps = j.list("steps");
  if (!with_steps) return;
  if (has_batch_line(job)) add_step(Obj::item(steps), SacctRow{job, true, cluster, now});
  for (const pb::StepRecord* st : r.steps) {
    SacctRow step{job, false, cluster, now};
    step.step = st;
    add_step(Obj::item(steps), step);
  }
}

Struct sacct_tree(const std::vector<SacctRecord>& records, const std::string& cluster, int64_t now, bool with_steps) {
  Struct root;
  Obj top(&root);
  slurm_meta(top, "openapi/dbv0.0.38", "Slurm OpenAPI DB v0.0.38");
  ListValue* jobs = top.list("jobs");
  for (const auto& r : records) add_job(Obj::item(jobs), r, cluster, now, with_steps);
  return root;
}

}  // namespace

std::string sacct_slurm_json(const std::vector<SacctRecord>& records, const std::string& cluster, int64_t now,
                             bool with_steps) {
  return slurm_json_text(sacct_tree(records, cluster, now, with_steps), sacct_key_order(), {});
}

std::string sacct_slurm_yaml(const std::vector<SacctRecord>& records, const std::string& cluster, int64_t now,
                             bool with_steps) {
  return slurm_yaml(sacct_tree(records, cluster, now, with_steps), {}, sacct_key_order());
}

}  // namespace hq::cmd
