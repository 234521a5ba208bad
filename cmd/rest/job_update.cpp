// POST /slurm/v0.0.43/job/{id}: a job_desc_msg body read as the changes scontrol update
// JobId= and scontrol hold/release would make: "hold" (true: hold, false: release) and
// settings in scontrol's words ("TimeLimit=90", "Partition=gpu"), which the controller checks
// by Slurm's rules (who may change what, and when). One thread.
#include "cmd/client/json_stream.hpp"
#include "cmd/rest/body.hpp"
#include "cmd/rest/envelope.hpp"

namespace hq::cmd {
namespace {

using rest::Fields;

// Text fields and their scontrol keys.
constexpr std::pair<const char*, const char*> kTexts[] = {
    {"name", "Name"},           {"comment", "Comment"},   {"qos", "QOS"},
    {"wckey", "WCKey"},         {"account", "Account"},   {"partition", "Partition"},
    {"constraints", "Features"}, {"dependency", "Dependency"}};

bool read_settings(Fields& f, std::vector<std::string>& settings) {
  for (const auto& [field, key] : kTexts) {
    std::string v;
    if (!f.str(field, v)) return false;
    if (f.has(field)) settings.push_back(std::string(key) + "=" + v);
  }
  std::vector<std::string> required, excluded;
  if (!f.strings("required_nodes", required) || !f.strings("excluded_nodes", excluded)) return false;
  if (f.has("required_nodes")) settings.push_back("ReqNodeList=" + rest::joined(required));
  if (f.has("excluded_nodes")) settings.push_back("ExcNodeList=" + rest::joined(excluded));
  int64_t limit = 0, tmin = 0, nice = 0, priority = 0, tasks = 0, mem_node = 0, mem_cpu = 0;
  bool unlimited = false;
  if (!f.integer("time_limit", limit, 1, 1LL << 31, &unlimited) || !f.integer("time_minimum", tmin, 1, 1LL << 31) ||
      !f.integer("nice", nice, -2147483645, 2147483645) || !f.integer("priority", priority, 0, 4294967294) ||
      !f.integer("tasks", tasks, 1, 1 << 20) || !f.integer("memory_per_node", mem_node, 1, 1LL << 40) ||
      !f.integer("memory_per_cpu", mem_cpu, 1, 1LL << 40))
    return false;
  if (f.has("time_limit")) settings.push_back("TimeLimit=" + (unlimited ? std::string("UNLIMITED") : std::to_string(limit)));
  if (f.has("time_minimum")) settings.push_back("TimeMin=" + std::to_string(tmin));
  if (f.has("nice")) settings.push_back("Nice=" + std::to_string(nice));
  if (f.has("priority")) settings.push_back("Priority=" + std::to_string(priority));
  if (f.has("tasks")) settings.push_back("NumTasks=" + std::to_string(tasks));
  if (f.has("memory_per_node")) settings.push_back("MinMemoryNode=" + std::to_string(mem_node));
  if (f.has("memory_per_cpu")) settings.push_back("MinMemoryCPU=" + std::to_string(mem_cpu));
  return true;
}

}  // namespace

Result<RestJobUpdate> rest_parse_job_update(std::string_view body, RestError* error) {
  google::protobuf::Struct root;
  if (!rest::parse_object(body, root, error)) return invalid(error->description);
  Fields f(root, "job");
  RestJobUpdate out;
  bool hold = false;
  if (!f.boolean("hold", hold) || !read_settings(f, out.settings)) {
    *error = rest::parse_error(f.error());
    return invalid(error->description);
  }
  if (f.has("hold")) out.hold = hold;
  f.add_unread(out.warnings);
  if (!out.hold && out.settings.empty()) out.warnings.push_back("Nothing to change: the body sets no field hq updates");
  return out;
}

std::string rest_job_post_json(uint64_t job_id, const std::vector<std::string>& problems, const RestMeta& meta,
                               const std::vector<std::string>& warnings) {
  JsonStream j(true);
  j.object().array("results").object().integer("job_id", static_cast<int64_t>(job_id)).str("step_id", "batch");
  j.str("error", problems.empty() ? "" : problems.front()).integer("error_code", problems.empty() ? 0 : 1);
  j.str("why", problems.empty() ? "" : problems.front()).end().end();
  std::vector<RestError> errors;
  for (const auto& p : problems) errors.push_back(rest_error(422, 0, p, p));
  rest::finish(j, meta, errors, warnings);
  return j.take();
}

}  // namespace hq::cmd
