// POST /slurm/v0.0.43/job/submit: a job_submit_req body ({"script", "job": job_desc_msg})
// read into hq's JobSpec, field by field as sbatch's options map to it. Identity fields
// (user_id, group_id) are only checked against the caller by the controller. One thread.
#include <algorithm>

#include "cmd/rest/body.hpp"
#include "core/mail.hpp"

namespace hq::cmd {
namespace {

using google::protobuf::Struct;
using rest::Fields;

constexpr int64_t kMaxCount = 1'000'000, kMaxMinutes = 365LL * 24 * 60 * 100;
constexpr int64_t kMaxMib = 1LL << 40;

RestError unprocessable(int error_number, std::string error, std::string description) {
  return rest_error(422, error_number, std::move(error), std::move(description));
}

// "gres/gpu[:TYPE]:N" (also "gres:gpu..." and "gpu..."): false for anything else.
bool gpu_tres(const std::string& text, std::string& type, int64_t& count) {
  std::string_view t = text;
  for (std::string_view prefix : {"gres/", "gres:"})
    if (t.substr(0, prefix.size()) == prefix) t.remove_prefix(prefix.size());
  if (t.substr(0, 4) != "gpu:") return false;
  t.remove_prefix(4);
  size_t colon = t.rfind(':');
  std::string_view n = colon == std::string_view::npos ? t : t.substr(colon + 1);
  if (n.empty() || n.size() > 6 || !std::all_of(n.begin(), n.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return false;
  type = colon == std::string_view::npos ? "" : std::string(t.substr(0, colon));
  count = std::stoll(std::string(n));
  return true;
}

// The text fields: names, where it runs, its files, mail, and who it is charged to.
bool read_texts(Fields& f, JobSpec& s, JobExtras& e) {
  std::string name, workdir, out, err, in, partition, account, constraint, dependency, array, cpu_bind;
  bool ok = f.str("name", name) && f.str("current_working_directory", workdir) && f.str("standard_output", out) &&
            f.str("standard_error", err) && f.str("standard_input", in) && f.str("partition", partition) &&
            f.str("account", account) && f.str("constraints", constraint) && f.str("dependency", dependency) &&
            f.str("array", array) && f.str("cpu_binding", cpu_bind) && f.str("qos", e.qos) &&
            f.str("comment", e.comment) && f.str("reservation", e.reservation) && f.str("wckey", e.wckey) &&
            f.str("mail_user", e.mail_user);
  if (!ok) return false;
  if (f.has("name")) s.name = name;
  s.workdir = workdir, s.output = out, s.error = err, s.partition = partition, s.account = account;
  s.constraint = constraint, s.dependency = dependency, s.array = array, s.cpu_bind = cpu_bind;
  e.input = in;
  std::vector<std::string> mail, required, excluded;
  if (!f.strings("mail_type", mail) || !f.strings("required_nodes", required) || !f.strings("excluded_nodes", excluded))
    return false;
  for (auto& m : mail) {
    std::transform(m.begin(), m.end(), m.begin(), [](unsigned char c) { return std::toupper(c); });
    m = rest::mail_type_to_hq(m);
  }
  if (!mail.empty()) {
    auto mail_types = parse_mail_types(rest::joined(mail));
    if (!mail_types) return f.fail_with("mail_type", mail_types.status().message());
    e.mail_type = *mail_types;
  }
  s.nodelist = rest::joined(required);
  s.exclude = rest::joined(excluded);
  return true;
}

// nodes: "N" or "MIN-MAX"; minimum_nodes and maximum_nodes.
bool read_nodes(Fields& f, JobSpec& s, std::string& error) {
  std::string nodes;
  int64_t lo = 0, hi = 0;
  if (!f.str("nodes", nodes) || !f.integer("minimum_nodes", lo, 1, kMaxCount) || !f.integer("maximum_nodes", hi, 1, kMaxCount))
    return false;
  if (!nodes.empty()) {
    size_t dash = nodes.find('-');
    try {
      size_t used = 0;
      lo = std::stoll(nodes.substr(0, dash), &used);
      if (used != (dash == std::string::npos ? nodes.size() : dash)) throw std::invalid_argument("");
      hi = dash == std::string::npos ? 0 : std::stoll(nodes.substr(dash + 1), &used);
      if (dash != std::string::npos && used != nodes.size() - dash - 1) throw std::invalid_argument("");
    } catch (const std::exception&) {
      error = "job.nodes: expected \"N\" or \"MIN-MAX\", not \"" + nodes + "\"";
      return false;
    }
    if (lo < 1 || lo > kMaxCount || hi < 0 || hi > kMaxCount) {
      error = "job.nodes: out of range: \"" + nodes + "\"";
      return false;
    }
  }
  if (lo > 0) s.nodes_min = static_cast<int32_t>(lo), s.nodes_set = true;
  if (hi > 0) s.nodes_max = static_cast<int32_t>(hi), s.nodes_set = true;
  return true;
}

// Counts, memory and time.
bool read_numbers(Fields& f, JobSpec& s, JobExtras& e) {
  int64_t tasks = 0, per_node = 0, cpt = 0, nice = 0, begin = 0, deadline = 0, priority = 0, mem_node = -1, mem_cpu = 0;
  int64_t limit = 0, tmin = 0, segment = 0, switches = 0, wait = -1;
  bool unlimited = false;
  bool ok = f.integer("tasks", tasks, 1, kMaxCount) && f.integer("tasks_per_node", per_node, 1, kMaxCount) &&
            f.integer("cpus_per_task", cpt, 1, 100000) && f.integer("nice", nice, -2147483645, 2147483645) &&
            f.integer("begin_time", begin, 0, 1LL << 40) && f.integer("deadline", deadline, 0, 1LL << 40) &&
            f.integer("priority", priority, 0, 4294967294) && f.integer("memory_per_node", mem_node, 0, kMaxMib) &&
            f.integer("memory_per_cpu", mem_cpu, 1, kMaxMib) &&
            f.integer("time_limit", limit, 1, kMaxMinutes, &unlimited) &&
            f.integer("time_minimum", tmin, 1, kMaxMinutes) && f.integer("segment_size", segment, 1, 65533) &&
            f.integer("required_switches", switches, 1, 65533) && f.integer("wait_for_switch", wait, 0, 1LL << 31);
  if (!ok) return false;
  if (tasks > 0) s.ntasks = static_cast<int32_t>(tasks), s.ntasks_set = true;
  if (per_node > 0) s.ntasks_per_node = static_cast<int32_t>(per_node);
  if (cpt > 0) s.cpus_per_task = static_cast<int32_t>(cpt), s.cpus_per_task_set = true;
  s.nice = static_cast<int32_t>(nice);
  s.begin_time = begin;
  e.deadline = deadline;
  e.priority = priority;
  if (mem_node == 0) s.mem_all = true;
  else if (mem_node > 0) s.mem_per_node_mib = mem_node;
  s.mem_per_cpu_mib = mem_cpu;
  if (unlimited) s.time_limit = -1;
  else if (limit > 0) s.time_limit = limit * 60;
  e.time_min = tmin * 60;
  s.segment = static_cast<int32_t>(segment);
  s.switches = static_cast<int32_t>(switches);
  if (wait >= 0) s.switch_wait = wait;
  return true;
}

// shared, flags, open_mode, hold, requeue: the switches.
bool read_flags(Fields& f, JobSpec& s, JobExtras& e, std::string& error) {
  std::vector<std::string> shared, flags, open_mode;
  bool hold = false, requeue = false;
  if (!f.strings("shared", shared) || !f.strings("flags", flags) || !f.strings("open_mode", open_mode) ||
      !f.boolean("hold", hold) || !f.boolean("requeue", requeue))
    return false;
  for (const auto& x : shared) {
    if (x == "none") s.exclusive = true;
    else if (x == "topo") s.exclusive_topo = true;
    else if (x != "oversubscribe" && x != "user" && x != "mcs") return error = "job.shared: unknown value \"" + x + "\"", false;
  }
  for (const auto& x : flags) {
    if (x == "KILL_INVALID_DEPENDENCY") s.kill_on_invalid_dep = true;
    else if (x == "NO_KILL_INVALID_DEPENDENCY") s.kill_on_invalid_dep = false;
  }
  for (const auto& x : open_mode) {
    if (x == "APPEND") e.open_mode = 1;
    else if (x == "TRUNCATE") e.open_mode = 2;
    else return error = "job.open_mode: unknown value \"" + x + "\"", false;
  }
  s.hold = hold;
  if (f.has("requeue")) s.requeue = requeue ? 1 : 0;
  return true;
}

// GPUs: tres_per_job, tres_per_node, tres_per_task; cpus_per_tres and memory_per_tres.
bool read_gpus(Fields& f, JobSpec& s, std::string& error) {
  struct Slot {
    const char* key;
    int32_t* count;
  } slots[] = {{"tres_per_job", &s.gpus}, {"tres_per_node", &s.gpus_per_node}, {"tres_per_task", &s.gpus_per_task}};
  for (const Slot& slot : slots) {
    std::string text, type;
    int64_t n = 0;
    if (!f.str(slot.key, text)) return false;
    if (text.empty()) continue;
    if (!gpu_tres(text, type, n)) return error = std::string("job.") + slot.key + ": hq knows GPUs only (\"gres/gpu[:TYPE]:N\"), not \"" + text + "\"", false;
    *slot.count = static_cast<int32_t>(n);
    s.gpu_type = type;
  }
  std::string cpus, mem, type;
  int64_t n = 0;
  if (!f.str("cpus_per_tres", cpus) || !f.str("memory_per_tres", mem)) return false;
  if (!cpus.empty()) {
    if (!gpu_tres(cpus, type, n)) return error = "job.cpus_per_tres: expected \"gres/gpu:N\"", false;
    s.cpus_per_gpu = static_cast<int32_t>(n);
  }
  if (!mem.empty()) {
    if (!gpu_tres(mem, type, n)) return error = "job.memory_per_tres: expected \"gres/gpu:MiB\"", false;
    s.mem_per_gpu_mib = n;
  }
  return true;
}

// environment: ["K=V", ...] or {"K": "V"}.
bool read_environment(Fields& f, const Struct& job, std::vector<std::string>& env, std::string& error) {
  auto it = job.fields().find("environment");
  if (it != job.fields().end() && it->second.kind_case() == google::protobuf::Value::kStructValue) {
    f.object("environment");
    for (const auto& [k, v] : it->second.struct_value().fields()) {
      if (v.kind_case() != google::protobuf::Value::kStringValue) return error = "job.environment." + k + ": expected a string", false;
      env.push_back(k + "=" + v.string_value());
    }
    std::sort(env.begin(), env.end());
    return true;
  }
  if (!f.strings("environment", env)) return false;
  for (const auto& kv : env)
    if (kv.find('=') == std::string::npos || kv.front() == '=') return error = "job.environment: \"" + kv + "\" is not NAME=VALUE", false;
  return true;
}

// The job description; `script` from the body's top level when the job has none.
Result<RestSubmit> read_job(const Struct& job, std::string script, RestError* error) {
  RestSubmit out;
  JobSpec& s = out.spec;
  JobExtras e;
  Fields f(job, "job");
  std::string bad, job_script, user_id, group_id;
  std::vector<std::string> env, argv;
  bool ok = read_texts(f, s, e) && read_nodes(f, s, bad) && read_numbers(f, s, e) && read_flags(f, s, e, bad) &&
            read_gpus(f, s, bad) && read_environment(f, job, env, bad) && f.strings("argv", argv) &&
            f.str("script", job_script) && f.str("user_id", user_id) && f.str("group_id", group_id);
  if (!ok) {
    *error = rest::parse_error(bad.empty() ? f.error() : bad);
    return invalid(error->description);
  }
  if (!job_script.empty()) script = job_script;
  RestError missing;
  if (script.empty()) missing = unprocessable(slurm_errno::kScriptMissing, "Job script not specified", "a batch job needs \"script\"");
  else if (env.empty()) missing = unprocessable(slurm_errno::kEnvironmentMissing, "Environment is missing in job", "a batch job needs job.environment (a list of NAME=VALUE)");
  else if (s.workdir.empty()) missing = unprocessable(slurm_errno::kMissingWorkDir, "Job cannot be submitted without the current working directory specified.", "a batch job needs job.current_working_directory");
  if (missing.http == 422) return *error = missing, invalid(missing.description);
  s.script = script;
  s.env = std::move(env);
  if (argv.size() > 1) s.argv.assign(argv.begin() + 1, argv.end());  // argv[0] is the script's name
  s.extra = std::move(e);
  out.user_id = user_id;
  out.group_id = group_id;
  f.add_unread(out.warnings);
  return out;
}

}  // namespace

Result<RestSubmit> rest_parse_submit(std::string_view body, RestError* error) {
  Struct root;
  if (!rest::parse_object(body, root, error)) return invalid(error->description);
  Fields top(root, "request");
  std::string script;
  if (!top.str("script", script)) return *error = rest::parse_error(top.error()), invalid(error->description);
  const Struct* job = top.object("job");
  if (!top.error().empty()) return *error = rest::parse_error(top.error()), invalid(error->description);
  auto jobs = root.fields().find("jobs");
  if (!job && jobs != root.fields().end()) {
    top.note("jobs");
    const auto& v = jobs->second;
    if (v.kind_case() != google::protobuf::Value::kListValue || v.list_value().values_size() == 0 ||
        v.list_value().values(0).kind_case() != google::protobuf::Value::kStructValue) {
      *error = rest::parse_error("\"jobs\" is not a list of job descriptions");
      error->error_number = slurm_errno::kRestInvalidJobsDesc;
      return invalid(error->description);
    }
    if (v.list_value().values_size() > 1) {
      *error = unprocessable(slurm_errno::kRestInvalidJobsDesc, "Heterogeneous jobs are not supported",
                             "hq runs no heterogeneous jobs: \"jobs\" may hold one job only");
      return invalid(error->description);
    }
    job = &v.list_value().values(0).struct_value();
  }
  if (!job) {
    *error = rest::parse_error("no \"job\" in the request");
    error->error = "Jobs description entry not found, empty or not dictionary or list";
    error->error_number = slurm_errno::kRestInvalidJobsDesc;
    return invalid(error->description);
  }
  auto out = read_job(*job, script, error);
  if (out) top.add_unread(out->warnings);
  return out;
}

}  // namespace hq::cmd
