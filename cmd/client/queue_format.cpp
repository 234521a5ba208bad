#include "cmd/client/queue_format.hpp"

#include <algorithm>
#include <iostream>
#include <map>

#include "cmd/client/output.hpp"
#include "core/array_spec.hpp"
#include "core/job.hpp"
#include "core/units.hpp"

namespace hq::cmd {
namespace {

std::string or_null(const std::string& s) { return s.empty() ? "(null)" : s; }

std::string when(int64_t t) { return t > 0 ? local_time(t) : "N/A"; }

int64_t elapsed(const pb::Job& j, int64_t now) {
  return j.start_time() > 0 ? (j.end_time() > 0 ? j.end_time() : now) - j.start_time() : 0;
}

std::string limit_text(int64_t seconds) { return seconds > 0 ? format_elapsed(seconds) : "UNLIMITED"; }

std::string cpus(const pb::Job& j) {
  int64_t n = 0;
  for (const auto& a : j.alloc()) n += a.cpus();
  if (n == 0) n = int64_t{std::max(1, j.spec().ntasks())} * std::max(1, j.spec().cpus_per_task());
  return std::to_string(n);
}

std::string job_id(const pb::Job& j) {
  if (j.array_job_id() == 0) return std::to_string(j.job_id());
  return std::to_string(j.array_job_id()) + "_" + std::to_string(j.array_task_id());
}

std::string partitions(const pb::Job& j) {  // a pending job shows every candidate
  if (j.state() != "PENDING" || j.partitions_size() < 2) return j.partition();
  std::string out;
  for (const auto& p : j.partitions()) out += (out.empty() ? "" : ",") + p;
  return out;
}

std::string state_code(const std::string& state) {
  JobState s;
  return parse_job_state(state, s) ? std::string(job_state_code(s)) : state;
}

}  // namespace

std::string squeue_value(const pb::Job& j, char field, int64_t now) {
  bool pending = j.state() == "PENDING", running = j.state() == "RUNNING";
  const pb::JobSpec& s = j.spec();
  switch (field) {
    case 'i': return job_id(j);
    case 'A': return std::to_string(j.job_id());
    case 'F': return std::to_string(j.array_job_id() ? j.array_job_id() : j.job_id());
    case 'K': return j.array_job_id() ? std::to_string(j.array_task_id()) : "N/A";
    case 'P': return partitions(j);
    case 'j': return s.name();
    case 'u': return s.user();
    case 'U': return std::to_string(s.uid());
    case 't': return state_code(j.state());
    case 'T': return j.state();
    case 'M': return format_elapsed(elapsed(j, now));
    case 'D': return std::to_string(j.alloc_size() > 0 ? j.alloc_size() : std::max(1, s.nodes_min()));
    case 'R': return pending ? "(" + j.reason() + ")" : j.nodelist();
    case 'N': return pending ? "" : j.nodelist();
    case 'l': return limit_text(j.time_limit());
    case 'L': return j.time_limit() > 0 ? format_elapsed(std::max<int64_t>(0, j.time_limit() - elapsed(j, now))) : "UNLIMITED";
    case 'C': return cpus(j);
    case 'r': return j.reason().empty() ? "None" : j.reason();
    case 'S': return when(j.start_time());
    case 'V': return when(j.submit_time());
    case 'e': return j.end_time() > 0 ? when(j.end_time()) : running && j.time_limit() > 0 ? when(j.start_time() + j.time_limit()) : "N/A";
    case 'Q': return std::to_string(j.priority());
    case 'a': return or_null(s.account());
    case 'Z': return s.workdir();
    case 'o': return "(null)";  // the script's path is not kept
    case 'm': return s.mem_per_node_mib() > 0 ? std::to_string(s.mem_per_node_mib()) + "M" : "0";
    case 'c': return std::to_string(std::max(1, s.cpus_per_task()));
    case 'E': return or_null(s.dependency());
    case 'y': return std::to_string(s.nice());
    case 'B': return j.alloc_size() > 0 && !pending ? j.alloc(0).node() : "n/a";
    case 'n': return s.nodelist();
    case 'x': return s.exclude();
    case 'Y': return or_null(j.sched_nodes());
    case 'k': return or_null(s.comment());
    case 'q': return or_null(s.qos());
    default: return "(null)";
  }
}

namespace {
int slurm_state_number(const std::string& state) {  // Slurm's enum job_states
  static const std::pair<const char*, int> kNumbers[] = {
      {"PENDING", 0}, {"RUNNING", 1}, {"COMPLETED", 3}, {"CANCELLED", 4}, {"FAILED", 5},
      {"TIMEOUT", 6}, {"NODE_FAIL", 7}, {"PREEMPTED", 8}, {"OUT_OF_MEMORY", 11}};
  for (const auto& [name, n] : kNumbers)
    if (state == name) return n;
  return 99;
}
}  // namespace

void sort_like_squeue(pb::QueueReply& q) {
  std::stable_sort(q.mutable_jobs()->begin(), q.mutable_jobs()->end(), [](const pb::Job& a, const pb::Job& b) {
    std::string pa = partitions(a), pb_ = partitions(b);
    if (pa != pb_) return pa < pb_;
    int sa = slurm_state_number(a.state()), sb = slurm_state_number(b.state());
    if (sa != sb) return sa < sb;
    if (a.priority() != b.priority()) return a.priority() > b.priority();
    return a.job_id() < b.job_id();
  });
}

std::vector<QueueRow> queue_rows(const pb::QueueReply& q, bool one_per_task) {
  std::vector<QueueRow> rows;
  rows.reserve(static_cast<size_t>(q.jobs_size()));
  struct Group {
    size_t row;
    std::vector<int32_t> tasks;
  };
  std::map<std::pair<uint64_t, std::string>, Group> groups;  // (array, reason) -> its row
  for (const auto& j : q.jobs()) {
    if (one_per_task || j.array_job_id() == 0 || j.state() != "PENDING") {
      rows.push_back({&j, "", ""});
      continue;
    }
    auto [it, fresh] = groups.try_emplace({j.array_job_id(), j.reason()}, Group{rows.size(), {}});
    if (fresh) rows.push_back({&j, "", ""});
    it->second.tasks.push_back(j.array_task_id());
  }
  for (auto& [key, g] : groups) {
    if (g.tasks.size() < 2) continue;
    std::sort(g.tasks.begin(), g.tasks.end());
    QueueRow& row = rows[g.row];
    row.tasks = format_array_indices(g.tasks, row.job->array_throttle());
    row.id = std::to_string(key.first) + "_[" + row.tasks + "]";
  }
  return rows;
}

void print_formatted(const std::vector<QueueRow>& rows, int64_t now, const SqueueFormat& format, bool header) {
  auto line = [&](const auto& cell) {
    std::string out;
    for (const FormatItem& it : format.items) out += it.field ? fit_cell(cell(it.field), it) : it.literal;
    std::cout << out << "\n";
  };
  if (header) line([](char f) { return std::string(squeue_header(f)); });
  for (const QueueRow& r : rows)
    line([&](char f) {
      if (f == 'i' && !r.id.empty()) return r.id;
      if (f == 'K' && !r.tasks.empty()) return r.tasks;
      return squeue_value(*r.job, f, now);
    });
}

}  // namespace hq::cmd
