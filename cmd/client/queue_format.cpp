#include "cmd/client/queue_format.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>

#include "cmd/client/output.hpp"
#include "cmd/users.hpp"
#include "core/array_spec.hpp"
#include "core/job.hpp"
#include "core/pattern.hpp"
#include "core/std_streams.hpp"
#include "core/units.hpp"

namespace hq::cmd {
namespace {

std::string when(int64_t t) { return t > 0 ? local_time(t) : "N/A"; }

std::string limit_text(int64_t seconds) { return seconds > 0 ? format_elapsed(seconds) : "UNLIMITED"; }

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

std::string_view state_code(std::string_view state) {
  if (state == "PENDING") return "PD";  // most of a long queue
  if (state == "RUNNING") return "R";
  if (state == "SUSPENDED") return "S";
  JobState s;
  return parse_job_state(std::string(state), s) ? job_state_code(s) : state;
}

std::string_view job_state_view(const pb::Job& j) { return j.suspended() ? "SUSPENDED" : std::string_view(j.state()); }

// `n` in decimal in `scratch`.
std::string_view decimal(int64_t n, std::string& scratch) {
  char buf[24];
  auto end = std::to_chars(buf, buf + sizeof buf, n).ptr;
  scratch.assign(buf, end);
  return scratch;
}

// A job's -o/-e/-i made absolute against its working directory, %j %u %x %A %a %N
// expanded (%N once it runs).
std::string stdio_path(const pb::Job& j, const std::string& pattern) {
  PatternContext ctx;
  ctx.job_id = j.job_id();
  ctx.array_job_id = j.array_job_id();
  if (j.array_job_id() != 0) ctx.array_task = j.array_task_id();
  ctx.user = j.spec().user();
  ctx.job_name = j.spec().name();
  if (j.alloc_size() > 0) ctx.node = j.alloc(0).node();
  std::string path = expand_pattern(pattern, ctx);
  if (!path.empty() && path[0] != '/') path = j.spec().workdir() + "/" + path;
  return path;
}

std::string exit_code(const pb::Job& j) {
  if (j.state() == "PENDING" || j.state() == "RUNNING") return "";
  return std::to_string(j.exit_code()) + ":" + std::to_string(j.exit_signal());
}

}  // namespace

std::string job_state(const pb::Job& j) { return j.suspended() ? "SUSPENDED" : j.state(); }

int64_t job_priority(const pb::Job& j) { return j.hold() != 0 ? 0 : static_cast<int64_t>(j.priority()); }

int64_t job_end_time(const pb::Job& j) {
  if (j.end_time() > 0) return j.end_time();
  bool running = j.state() == "RUNNING" || j.state() == "COMPLETING";
  return running && j.time_limit() > 0 && !j.suspended() ? j.start_time() + j.time_limit() + j.suspended_secs() : 0;
}

int64_t job_start_time(const pb::Job& j, int64_t now) {
  if (j.start_time() > 0 || j.state() != "PENDING") return j.start_time();
  if (j.expected_start() > 0) return std::max(j.expected_start(), now);
  return j.spec().begin_time() > now ? j.spec().begin_time() : 0;
}

int64_t job_run_time(const pb::Job& j, int64_t now) {
  if (j.start_time() <= 0) return 0;
  int64_t until = j.end_time() > 0 ? j.end_time() : now;
  int64_t suspended = j.suspended_secs() + (j.suspended() ? std::max<int64_t>(0, until - j.suspend_time()) : 0);
  return std::max<int64_t>(0, until - j.start_time() - suspended);
}

int64_t job_cpu_count(const pb::Job& j) {
  int64_t n = 0;
  for (const auto& a : j.alloc()) n += a.cpus();
  if (n == 0) n = int64_t{std::max(1, j.spec().ntasks())} * std::max(1, j.spec().cpus_per_task());
  return n;
}

int32_t job_node_count(const pb::Job& j) { return j.alloc_size() > 0 ? j.alloc_size() : std::max(1, j.spec().nodes_min()); }

std::string job_stdio(const pb::Job& j, char stream) {
  const pb::JobSpec& s = j.spec();
  if (s.alloc_kind() != 0) return "";  // srun and salloc: the client's own terminal
  std::string out = !s.output().empty() ? s.output() : j.array_job_id() ? "slurm-%A_%a.out" : "slurm-%j.out";
  if (stream == 'i') return s.input().empty() ? "/dev/null" : stdio_path(j, s.input());
  return stdio_path(j, stream == 'e' && !s.error().empty() ? s.error() : out);
}

std::string squeue_value(const pb::Job& j, char field, int64_t now) {
  const pb::JobSpec& s = j.spec();
  auto is_pending = [&] { return j.state() == "PENDING"; };
  switch (field) {
    case 'i': return job_id(j);
    case 'A': return std::to_string(j.job_id());
    case 'F': return std::to_string(j.array_job_id() ? j.array_job_id() : j.job_id());
    case 'K': return j.array_job_id() ? std::to_string(j.array_task_id()) : "N/A";
    case 'P': return partitions(j);
    case 'j': return s.name();
    case 'u': return s.user();
    case 'U': return std::to_string(s.uid());
    case 't': return std::string(state_code(job_state_view(j)));
    case 'T': return job_state(j);
    case 'M': return format_elapsed(job_run_time(j, now));
    case 'D': return std::to_string(job_node_count(j));
    case 'R': return is_pending() ? "(" + j.reason() + ")" : j.nodelist();
    case 'N': return is_pending() ? "" : j.nodelist();
    case 'l': return limit_text(j.time_limit());
    case 'L': return j.time_limit() > 0 ? format_elapsed(std::max<int64_t>(0, j.time_limit() - job_run_time(j, now))) : "UNLIMITED";
    case 'C': return std::to_string(job_cpu_count(j));
    case 'r': return j.reason().empty() ? "None" : j.reason();
    case 'S': return when(job_start_time(j, now));
    case 'V': return when(j.submit_time());
    case 'e': return job_end_time(j) > 0 ? when(job_end_time(j)) : "N/A";
    case 'Q': return std::to_string(job_priority(j));
    case 'a': return or_null(s.account());
    case 'Z': return s.workdir();
    case 'o': return "(null)";  // the script's path is not kept
    case 'm': return s.mem_per_node_mib() > 0 ? std::to_string(s.mem_per_node_mib()) + "M" : "0";
    case 'c': return std::to_string(std::max(1, s.cpus_per_task()));
    case 'E': return or_null(s.dependency());
    case 'y': return std::to_string(s.nice());
    case 'B': return j.alloc_size() > 0 && !is_pending() ? j.alloc(0).node() : "n/a";
    case 'n': return s.nodelist();
    case 'x': return s.exclude();
    case 'Y': return or_null(j.sched_nodes());
    case 'k': return or_null(s.comment());
    case 'q': return or_null(s.qos());
    case 'v': return or_null(s.reservation());
    case 'w': return or_null(s.wckey());
    case 'f': return or_null(s.constraint());
    case 'g': return group_name(s.gid());
    case 'G': return std::to_string(s.gid());
    case kSqNumTasks: return std::to_string(std::max(1, s.ntasks()));
    case kSqExitCode: return exit_code(j);
    case kSqStdOut: return job_stdio(j, 'o');
    case kSqStdErr: return job_stdio(j, 'e');
    case kSqStdIn: return job_stdio(j, 'i');
    case kSqTimeMin: return s.time_min() > 0 ? format_elapsed(s.time_min()) : "N/A";
    case kSqDeadline: return s.deadline() > 0 ? local_time(s.deadline()) : "N/A";
    case kSqCpusPerTask: return std::to_string(std::max(1, s.cpus_per_task()));
    case kSqRestarts: return std::to_string(j.restart_count());
    case kSqReqSwitch: return std::to_string(std::max(0, s.switches()));
    case kSqWait4Switch: return format_elapsed(s.switches() > 0 ? std::max<int64_t>(0, s.switch_wait()) : 0);
    default: return "(null)";
  }
}

std::string_view squeue_cell(const pb::Job& j, char field, int64_t now, std::string& scratch) {
  switch (field) {  // the default listing's fields, and plain texts; the rest as squeue_value gives them
    case 'i':
      if (j.array_job_id() != 0) break;
      [[fallthrough]];
    case 'A': return decimal(static_cast<int64_t>(j.job_id()), scratch);
    case 'P':
      if (j.partitions_size() < 2 || j.state() != "PENDING") return j.partition();
      break;
    case 'j': return j.spec().name();
    case 'u': return j.spec().user();
    case 't': return state_code(job_state_view(j));
    case 'T': return job_state_view(j);
    case 'D': return decimal(job_node_count(j), scratch);
    case 'C': return decimal(job_cpu_count(j), scratch);
    case 'R':
      if (j.state() != "PENDING") return j.nodelist();
      scratch.assign(1, '(').append(j.reason()).push_back(')');
      return scratch;
    case 'N': return j.state() == "PENDING" ? std::string_view() : std::string_view(j.nodelist());
    case 'M':
      if (j.start_time() <= 0) return "0:00";
      break;
    default: break;
  }
  scratch = squeue_value(j, field, now);
  return scratch;
}

namespace {
int slurm_state_number(std::string_view state) {  // Slurm's enum job_states
  static const std::pair<const char*, int> kNumbers[] = {
      {"PENDING", 0}, {"RUNNING", 1}, {"SUSPENDED", 2}, {"COMPLETED", 3}, {"CANCELLED", 4}, {"FAILED", 5},
      {"TIMEOUT", 6}, {"NODE_FAIL", 7}, {"PREEMPTED", 8}, {"DEADLINE", 10}, {"OUT_OF_MEMORY", 11}};
  for (const auto& [name, n] : kNumbers)
    if (state == name) return n;
  return 99;
}
}  // namespace

namespace {

// One -S key's value for a job when the key is a number (states in Slurm's order);
// nullopt when it is the text squeue shows.
std::optional<int64_t> sort_number(const pb::Job& j, char key, int64_t now) {
  switch (key) {
    case 't': case 'T': return slurm_state_number(job_state_view(j));
    case 'p': case 'Q': return job_priority(j);
    case 'i': case 'A': case 'F': return static_cast<int64_t>(j.job_id());
    case 'K': return j.array_job_id() ? j.array_task_id() : -1;
    case 'M': return job_run_time(j, now);
    case 'l': return j.time_limit();
    case 'S': return job_start_time(j, now);
    case 'V': return j.submit_time();
    case 'e': return j.end_time();
    case 'D': return job_node_count(j);
    case 'C': return job_cpu_count(j);
    case 'U': case 'y': case 'c': return std::atoll(squeue_value(j, key, now).c_str());
    default: return std::nullopt;
  }
}

// Puts the jobs in the order `perm` gives (perm[i]: the index of the job that goes to i),
// moving pointers only.
void permute(google::protobuf::RepeatedPtrField<pb::Job>& jobs, const std::vector<size_t>& perm) {
  size_t n = perm.size();
  std::vector<size_t> where(n), at(n);  // an original index's position now; the original index at a position
  for (size_t i = 0; i < n; ++i) where[i] = at[i] = i;
  for (size_t i = 0; i < n; ++i) {
    size_t pos = where[perm[i]];
    if (pos == i) continue;
    jobs.SwapElements(static_cast<int>(i), static_cast<int>(pos));
    size_t displaced = at[i];
    at[i] = perm[i], at[pos] = displaced;
    where[perm[i]] = i, where[displaced] = pos;
  }
}

}  // namespace

SortTable::SortTable(std::string_view keys, int64_t now) : now_(now) {
  for (size_t i = 0; i < keys.size(); ++i) {
    char key = keys[i];
    if (key == ',' || key == '+' || key == '-') continue;
    bool reversed = i > 0 && keys[i - 1] == '-';
    columns_.push_back({key, reversed, !sort_number(pb::Job::default_instance(), key, now).has_value(), {}, nullptr});
  }
}

// A text is found without a copy per job: the texts seen are kept once each, the last one
// checked first.
int64_t SortTable::text_value(Column& c, const pb::Job& j) {
  std::string_view text = squeue_cell(j, c.key, now_, scratch_);
  if (!c.last || c.last->first != text) {
    auto it = c.seen.find(text);
    if (it == c.seen.end()) it = c.seen.emplace(std::string(text), static_cast<int64_t>(c.seen.size())).first;
    c.last = &*it;
  }
  return c.last->second;
}

void SortTable::add(const pb::Job& j) {
  for (Column& c : columns_) rows_.push_back(c.text ? text_value(c, j) : sort_number(j, c.key, now_).value_or(0));
  rows_.push_back(static_cast<int64_t>(j.job_id()));
}

// Slurm's -S: the first key decides, then the next...; job id last. A text's value becomes
// its rank now, and a reversed key's its complement, which orders the other way; the sort
// compares rows of numbers.
std::vector<size_t> SortTable::order() {
  HQ_CHECK(!ranked_);
  ranked_ = true;
  size_t width = columns_.size() + 1;
  size_t n = rows_.size() / width;
  for (size_t c = 0; c < columns_.size(); ++c) {
    Column& col = columns_[c];
    std::vector<int64_t> rank(col.seen.size());
    int64_t r = 0;
    for (const auto& [text, first] : col.seen) rank[static_cast<size_t>(first)] = r++;
    for (size_t k = 0; k < n; ++k) {
      int64_t& v = rows_[k * width + c];
      if (col.text) v = rank[static_cast<size_t>(v)];
      if (col.reversed) v = ~v;
    }
  }
  std::vector<size_t> perm(n);
  for (size_t i = 0; i < n; ++i) perm[i] = i;
  const int64_t* table = rows_.data();
  auto before = [table, width](size_t a, size_t b) {
    const int64_t* x = table + a * width;
    const int64_t* y = table + b * width;
    for (size_t c = 0; c + 1 < width; ++c)
      if (x[c] != y[c]) return x[c] < y[c];
    return static_cast<uint64_t>(x[width - 1]) < static_cast<uint64_t>(y[width - 1]);
  };
  if (std::is_sorted(perm.begin(), perm.end(), before)) return {};
  std::sort(perm.begin(), perm.end(), before);
  return perm;
}

void sort_jobs(pb::QueueReply& q, std::string_view keys) {
  auto& jobs = *q.mutable_jobs();
  SortTable table(keys, q.now());
  table.reserve(static_cast<size_t>(jobs.size()));
  for (const pb::Job& j : jobs) table.add(j);
  std::vector<size_t> perm = table.order();
  if (!perm.empty()) permute(jobs, perm);
}

bool sort_keeps_array_groups(std::string_view keys) {
  for (size_t i = 0; i < keys.size(); ++i) {
    char key = keys[i];
    if (key == ',' || key == '+' || key == '-') continue;
    bool reversed = i > 0 && keys[i - 1] == '-';
    // What every task of a group shows alike (core/array_rows' same_listed_line), and the
    // job id ascending (F sorts by it too): the first of a group then comes first among its
    // tasks.
    bool alike = std::string_view("PtTpQljuUDCr").find(key) != std::string_view::npos;
    bool by_id = std::string_view("iAF").find(key) != std::string_view::npos;
    if (!alike && !(by_id && !reversed)) return false;
  }
  return true;
}

bool joins_array_row(const pb::Job& j) {
  return j.array_tasks().empty() && j.array_job_id() != 0 && j.state() == "PENDING";
}

std::string listed_line_key(const pb::Job& j) {
  return j.spec().SerializeAsString() + '\0' + j.reason() + '\0' + j.partition() + '\0' + std::to_string(j.time_limit()) +
         '\0' + std::to_string(j.priority()) + '\0' + std::to_string(j.hold()) + '\0' + std::to_string(j.eligible_time());
}

QueueRow row_as_sent(const pb::Job& j) {
  if (j.array_tasks().empty()) return {&j, "", ""};
  return {&j, std::to_string(j.array_job_id()) + "_[" + j.array_tasks() + "]", j.array_tasks()};
}

std::vector<QueueRow> queue_rows(const pb::QueueReply& q, bool one_per_task) {
  std::vector<QueueRow> rows;
  rows.reserve(static_cast<size_t>(q.jobs_size()));
  struct Group {
    size_t row;
    std::vector<int32_t> tasks;
  };
  // (array, what its line shows) -> its row: a task updated on its own (a time limit, a
  // comment, a start time) gets a line of its own, as in Slurm, where it is split off the
  // array's record.
  std::map<std::pair<uint64_t, std::string>, Group> groups;
  for (const auto& j : q.jobs()) {
    if (one_per_task || !joins_array_row(j)) {  // grouped by the controller already, or alone
      rows.push_back(row_as_sent(j));
      continue;
    }
    auto [it, fresh] = groups.try_emplace({j.array_job_id(), listed_line_key(j)}, Group{rows.size(), {}});
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

void append_header(std::string& out, const ColumnFormat& format) {
  append_line(out, format, [](char f) { return std::string(squeue_header(f)); });
  out += '\n';
}

void append_row(std::string& out, const QueueRow& r, int64_t now, const ColumnFormat& format, std::string& scratch) {
  for (const FormatItem& it : format.items) {
    if (!it.field) out += it.literal;
    else if (it.field == 'i' && !r.id.empty()) append_cell(out, r.id, it);
    else if (it.field == 'K' && !r.tasks.empty()) append_cell(out, r.tasks, it);
    else append_cell(out, squeue_cell(*r.job, it.field, now, scratch), it);
  }
  out += '\n';
}

void print_formatted(const std::vector<QueueRow>& rows, int64_t now, const ColumnFormat& format, bool header) {
  std::string out;  // every line, then one write
  out.reserve((rows.size() + 1) * 96);
  if (header) append_header(out, format);
  std::string scratch;
  for (const QueueRow& r : rows) append_row(out, r, now, format, scratch);
  hq::cout().write(out.data(), static_cast<std::streamsize>(out.size()));
}

}  // namespace hq::cmd
