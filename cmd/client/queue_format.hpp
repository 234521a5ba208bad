// squeue -o: a job's value for each field letter of core/squeue_format, as Slurm 22.05
// prints it ("(null)" for what a job has not got, "N/A" for times not known yet), and the
// table of a reply in a parsed format. One thread (a client's).
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/squeue_format.hpp"
#include "core/status.hpp"
#include "hq.pb.h"

namespace hq::cmd {

// Job `j` of a reply made at `now`: its value for `field`.
std::string squeue_value(const pb::Job& j, char field, int64_t now);
// The same as a view: of the record's own text where the value is that (a name, a user,
// a single partition), else of a literal or of `scratch`, which it then fills. What a long
// listing formats, without a string built per cell.
std::string_view squeue_cell(const pb::Job& j, char field, int64_t now, std::string& scratch);

// A job's state as Slurm shows it: SUSPENDED for a suspended job (RUNNING on the wire).
std::string job_state(const pb::Job& j);
// A job's priority as Slurm shows it: 0 while it is held (Slurm's hold sets it to 0; hq
// keeps the computed one for its release).
int64_t job_priority(const pb::Job& j);
// How long a started job has run by `now` (or ran), time suspended not counted.
int64_t job_run_time(const pb::Job& j, int64_t now);
// When the job ended, or for a running one (not suspended) with a time limit, when its
// limit ends it (start + limit + time suspended); 0 when not known (squeue %e, EndTime=).
int64_t job_end_time(const pb::Job& j);
// When the job started; for a pending one what Slurm's controller reports: its expected
// start (not before `now`), else its begin time (--begin, StartTime=) while that is ahead;
// 0 when not known (squeue %S, StartTime=).
int64_t job_start_time(const pb::Job& j, int64_t now);

// The CPUs a job holds (or asks for, while pending), and its nodes (or minimum node count):
// squeue's %C and %D.
int64_t job_cpu_count(const pb::Job& j);
int32_t job_node_count(const pb::Job& j);

// A batch job's stdout ('o'), stderr ('e') or stdin ('i') as scontrol and squeue show it:
// expanded and absolute; "" for srun's and salloc's.
std::string job_stdio(const pb::Job& j, char stream);

// Jobs in squeue -S's order: keys are field letters, "-" before one reverses it; Slurm's
// default is "P,t,-p" (partition, then state in Slurm's numbering: pending before running
// before the ended, then the higher priority). Ties keep the id order.
void sort_jobs(pb::QueueReply& q, std::string_view keys);
inline constexpr std::string_view kSqueueDefaultSort = "P,t,-p";

// What squeue -S sorts by, taken a job at a time (sort_jobs, and a listing printed as its
// records are read): a row of numbers per job, each key's value (a text becomes its rank
// among the distinct texts, which a listing has few of: partitions, users, names), then
// the job id.
class SortTable {
 public:
  SortTable(std::string_view keys, int64_t now);
  SortTable(const SortTable&) = delete;  // its columns point into their own maps
  SortTable& operator=(const SortTable&) = delete;
  void reserve(size_t jobs) { rows_.reserve(jobs * (columns_.size() + 1)); }
  void add(const pb::Job& j);
  // The order of the jobs added: order[i] is the index of the job that goes i-th. Empty
  // when they are in it already (the controller lists by id, often the answer). Once,
  // after the last add.
  std::vector<size_t> order();

 private:
  struct Column {
    char key;
    bool reversed;
    bool text;
    std::map<std::string, int64_t, std::less<>> seen;  // a text -> the order it was first seen in
    const std::pair<const std::string, int64_t>* last = nullptr;  // the text of the job before
  };
  int64_t text_value(Column& c, const pb::Job& j);
  int64_t now_;
  std::vector<Column> columns_;
  std::vector<int64_t> rows_;  // a row per job: the columns' values, then the job id
  std::string scratch_;
  bool ranked_ = false;  // order() has made the texts ranks
};

// One line of squeue: a job, or the pending tasks of an array that squeue shows as one
// ("12_[3-1000%10]": `id`, and `tasks` for %K; both empty for a plain row).
struct QueueRow {
  const pb::Job* job = nullptr;
  std::string id, tasks;
};

// Whether an array's pending tasks that show the same line may come grouped by the
// controller (QueueRequest.collapse_arrays) for squeue -S `keys`: each key is one they all
// show alike, or the job id ascending, so the first of a group sorts first among them.
bool sort_keeps_array_groups(std::string_view keys);

// Whether `j` is one of an array's pending tasks that squeue shows on one row with the
// others that show the same line (unless -r), as the controller sent it ungrouped; and
// that line, as a key.
bool joins_array_row(const pb::Job& j);
std::string listed_line_key(const pb::Job& j);

// The row of a job as the controller sent it: the pending tasks it grouped
// (QueueRequest.collapse_arrays) as "12_[3-1000%10]", else the job alone.
QueueRow row_as_sent(const pb::Job& j);

// The rows for a reply's jobs, in their order. Unless `one_per_task` (squeue -r), an
// array's pending tasks that wait for the same reason are one row, where the first of
// them stands, as Slurm shows the part of an array it has not split off yet.
std::vector<QueueRow> queue_rows(const pb::QueueReply& q, bool one_per_task);

// The header line (unless `header` is false) and a line per row, on stdout.
void print_formatted(const std::vector<QueueRow>& rows, int64_t now, const ColumnFormat& format, bool header);
// The header line, and one row's line, appended to `out` (`scratch`: room for a cell).
void append_header(std::string& out, const ColumnFormat& format);
void append_row(std::string& out, const QueueRow& r, int64_t now, const ColumnFormat& format, std::string& scratch);

// What a fetch of squeue's jobs gives: the reply (now, more, unknown ids) and its jobs,
// parsed in `reply`, or, for a brief listing of one page, left serialized in `records`,
// which queue_with prints as it parses them (cmd/client/queue_stream) or, where it must
// see them all at once (arrays to group, a job's tasks to pick), parses into `reply`; or
// the listing's text, where the controller made it.
struct QueueAnswer {
  pb::QueueReply* reply = nullptr;
  std::vector<std::string_view> records;
  std::optional<std::string_view> listing;  // the text the controller made (QueueRequest.render)
  // Or that text as a file it passed (QueueRequest.listing_as_file): owned here, its first
  // listing_file_bytes bytes.
  int listing_file = -1;
  uint64_t listing_file_bytes = 0;
};

// squeue itself (`args[0]` its name): options parsed, `fetch` asked for the jobs (again
// every -i seconds) and the answer printed. Returns the exit code. (Steps, -s, are not
// fetched through it.) The fetch keeps each answer alive until its next call or the end
// of queue_with (squeue's own lives on an arena it never frees: the process ends next).
using QueueFetch = std::function<Result<QueueAnswer>(const pb::QueueRequest&)>;
// `cluster`: the cluster's name once fetched (squeue --json's "cluster").
int queue_with(const std::vector<std::string>& args, const QueueFetch& fetch,
               const std::function<std::string()>& cluster = {});

}  // namespace hq::cmd
