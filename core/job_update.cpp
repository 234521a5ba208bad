#include "core/job_update.hpp"

#include <algorithm>

#include "core/units.hpp"

namespace hq {
namespace {

Status bad_value(std::string_view key) { return invalid("Invalid " + std::string(key) + " value"); }

// One Key=Value into `u`; `key` is lower case.
Status take(JobUpdate& u, const std::string& key, std::string_view v, const std::string& whole) {
  auto text = [&](std::optional<std::string>& field) { field = std::string(v); return Status::ok(); };
  auto integer = [&](auto& field, int64_t lo, int64_t hi, std::string_view name) -> Status {
    auto n = parse_int(v, lo, hi);
    if (!n) return bad_value(name);
    field = static_cast<std::remove_reference_t<decltype(*field)>>(*n);
    return Status::ok();
  };
  auto memory = [&](std::optional<int64_t>& field, std::string_view name) -> Status {
    auto m = parse_size_mib(v);
    if (!m) return bad_value(name);
    field = *m;
    return Status::ok();
  };
  if (key == "timelimit") {
    std::string_view rest = v;
    if (!rest.empty() && (rest[0] == '+' || rest[0] == '-')) {
      u.time_limit_sign = rest[0] == '+' ? 1 : -1;
      rest.remove_prefix(1);
    }
    auto d = parse_time_limit(rest);
    if (!d || (u.time_limit_sign && *d == kUnlimited)) return bad_value("TimeLimit");
    u.time_limit = *d;
    return Status::ok();
  }
  if (key == "timemin") {
    auto d = parse_time_limit(v);
    if (!d) return bad_value("TimeMin");
    u.time_min = *d;
    return Status::ok();
  }
  if (key == "name" || key == "jobname") {
    if (v.empty()) return bad_value("Name");
    return text(u.name);
  }
  if (key == "comment") return text(u.comment);
  if (key == "qos") return text(u.qos);
  if (key == "wckey") return text(u.wckey);
  if (key == "account") return text(u.account);
  if (key == "partition") {
    if (v.empty()) return bad_value("Partition");
    return text(u.partition);
  }
  if (key == "features") return text(u.features);
  if (key == "reqnodelist" || key == "nodelist") return text(u.req_nodes);
  if (key == "excnodelist") return text(u.exc_nodes);
  if (key == "dependency") return text(u.dependency);
  if (key == "nice") return integer(u.nice, -2147483645, 2147483645, "Nice");
  if (key == "numtasks" || key == "reqprocs") return integer(u.ntasks, 1, 1 << 20, "NumTasks");
  if (key == "numnodes" || key == "reqnodes") {
    size_t dash = v.find('-');
    auto lo = parse_int(v.substr(0, dash), 1, 65536);
    auto hi = dash == std::string_view::npos ? lo : parse_int(v.substr(dash + 1), 1, 65536);
    if (!lo || !hi || *hi < *lo) return bad_value("NumNodes");
    u.nodes_min = static_cast<int32_t>(*lo);
    u.nodes_max = dash == std::string_view::npos ? 0 : static_cast<int32_t>(*hi);
    return Status::ok();
  }
  if (key == "minmemorynode") return memory(u.mem_per_node_mib, "MinMemoryNode");
  if (key == "minmemorycpu") return memory(u.mem_per_cpu_mib, "MinMemoryCPU");
  if (key == "priority") {
    if (to_lower(v) == "top") return u.priority = 4294967294LL, Status::ok();
    if (Status s = integer(u.priority, 0, 4294967293LL, "Priority"); !s) return s;
    if (*u.priority == 0) return invalid("Priority=0 is a hold here: use scontrol hold");
    return Status::ok();
  }
  if (key == "starttime") return text(u.start_time);
  if (key == "deadline") return text(u.deadline);
  if (key == "arraytaskthrottle") return integer(u.array_throttle, 0, 1 << 30, "ArrayTaskThrottle");
  return invalid("Update of this parameter is not supported: " + whole);
}

// Fields a running job no longer takes.
bool asks_pending_only(const JobUpdate& u) {
  return u.changes_resources() || u.qos || u.account || u.dependency || u.start_time || u.time_min || u.deadline ||
         u.wckey;
}

}  // namespace

Result<JobUpdate> parse_job_update(const std::vector<std::string>& settings) {
  JobUpdate u;
  for (const std::string& s : settings) {
    size_t eq = s.find('=');
    if (eq == std::string::npos || eq == 0) return invalid("Invalid input: " + s);
    if (Status st = take(u, to_lower(s.substr(0, eq)), std::string_view(s).substr(eq + 1), s); !st) return st;
  }
  return u;
}

Result<Job> apply_job_update(const Job& job, const JobUpdate& u, bool admin, Time begin, Time deadline) {
  if (is_terminal(job.state)) return invalid("Job has already finished");
  bool pending = job.state == JobState::kPending;
  if (!pending && asks_pending_only(u)) return invalid("Job is no longer pending execution");
  if ((u.priority || (u.nice && *u.nice < 0)) && !admin) return denied("Access/permission denied");
  Job out = job;
  JobSpec& s = out.spec;
  if (u.time_limit) {
    Duration limit = *u.time_limit;
    if (u.time_limit_sign) {
      if (job.time_limit == kUnlimited) return invalid("Invalid TimeLimit value: the limit is UNLIMITED");
      limit = std::max<Duration>(1, job.time_limit + u.time_limit_sign * limit);
    }
    bool longer = job.time_limit != kUnlimited && (limit == kUnlimited || limit > job.time_limit);
    if (longer && !admin) return denied("Access/permission denied");
    s.time_limit = limit;
    out.time_limit = limit;
  }
  if (u.name) s.name = *u.name;
  if (u.account) s.account = *u.account;
  if (u.partition) s.partition = *u.partition;
  if (u.features) s.constraint = *u.features;
  if (u.req_nodes) s.nodelist = *u.req_nodes;
  if (u.exc_nodes) s.exclude = *u.exc_nodes;
  if (u.dependency) s.dependency = *u.dependency;
  if (u.nice) s.nice = *u.nice;
  if (u.nodes_min) {
    s.nodes_min = *u.nodes_min;
    s.nodes_max = *u.nodes_max;
    s.nodes_set = true;
  }
  if (u.ntasks) {
    s.ntasks = *u.ntasks;
    s.ntasks_set = true;
  }
  if (u.mem_per_node_mib) {
    s.mem_per_node_mib = *u.mem_per_node_mib;
    s.mem_all = s.mem_per_node_mib == 0;  // MinMemoryNode=0: all of each node's memory, as --mem=0
    s.mem_per_cpu_mib = s.mem_per_gpu_mib = 0;
  }
  if (u.mem_per_cpu_mib) {
    s.mem_per_cpu_mib = *u.mem_per_cpu_mib;
    s.mem_all = false;
    s.mem_per_node_mib = s.mem_per_gpu_mib = 0;
  }
  if (u.start_time) {
    s.begin_time = begin;
    out.eligible_time = std::max(job.submit_time, begin);
  }
  if (u.array_throttle && job.array_job_id) out.array_throttle = *u.array_throttle;
  if (u.comment || u.qos || u.wckey || u.priority || u.time_min || u.deadline) {
    JobExtras e = *s.extra;
    if (u.comment) e.comment = *u.comment;
    if (u.qos) e.qos = *u.qos;
    if (u.wckey) e.wckey = *u.wckey;
    if (u.priority) e.priority = *u.priority;
    if (u.time_min) e.time_min = *u.time_min;
    if (u.deadline) e.deadline = deadline;
    s.extra = std::move(e);
  }
  if (Status v = validate_spec(s); !v) return v;
  return out;
}

}  // namespace hq
