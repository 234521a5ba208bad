#include "cmd/client/queue_stream.hpp"

#include <google/protobuf/io/coded_stream.h>

#include <set>
#include <utility>

#include "cmd/client/queue_format.hpp"

namespace hq::cmd {
namespace {

// `record` parsed into `job`, whose memory the record before it leaves: its strings keep
// their buffers, and its spec stays where it is (protobuf's Clear of a message on the heap
// frees and a parse allocates a proto3 message field anew each time). A record without a
// spec shows an empty one, as the default instance does.
bool parse_reusing(std::string_view record, pb::Job& job) {
  pb::JobSpec* spec = job.release_spec();
  job.Clear();
  if (spec) {
    spec->Clear();
    job.set_allocated_spec(spec);
  }
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(record.data()), static_cast<int>(record.size()));
  return job.MergeFromCodedStream(&in) && in.ConsumedEntireMessage();
}

}  // namespace

Result<std::optional<std::string>> format_records(const std::vector<std::string_view>& records, int64_t now,
                                                  const ColumnFormat& format, std::string_view sort_keys, bool header,
                                                  bool one_per_task) {
  std::string lines;  // the header, then each record's line in the order they came
  lines.reserve((records.size() + 1) * 96);
  if (header) append_header(lines, format);
  std::vector<size_t> starts;  // where each record's line starts; one more for the end
  starts.reserve(records.size() + 1);
  SortTable table(sort_keys, now);
  table.reserve(records.size());
  std::set<std::pair<uint64_t, std::string>> alone;  // an array's pending tasks that came ungrouped, by line
  pb::Job job;
  std::string scratch;
  for (std::string_view record : records) {
    if (!parse_reusing(record, job)) return invalid("undecodable job record in the controller's reply");
    if (!one_per_task && joins_array_row(job) && !alone.emplace(job.array_job_id(), listed_line_key(job)).second)
      return std::optional<std::string>();  // two that show as one row
    table.add(job);
    starts.push_back(lines.size());
    append_row(lines, row_as_sent(job), now, format, scratch);
  }
  starts.push_back(lines.size());
  std::vector<size_t> order = table.order();
  if (order.empty()) return std::optional<std::string>(std::move(lines));
  std::string sorted = lines.substr(0, starts.front());  // the header
  sorted.reserve(lines.size());
  for (size_t k : order) sorted.append(lines, starts[k], starts[k + 1] - starts[k]);
  return std::optional<std::string>(std::move(sorted));
}

}  // namespace hq::cmd
