#include "cmd/client/queue_stream.hpp"

#include <google/protobuf/io/coded_stream.h>

#include <algorithm>

#include "net/convert.hpp"

namespace hq::cmd {
namespace {

// `record` parsed into `job`, whose memory the record before it leaves (clear_reusing).
bool parse_reusing(std::string_view record, pb::Job& job) {
  clear_reusing(job);
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(record.data()), static_cast<int>(record.size()));
  return job.MergeFromCodedStream(&in) && in.ConsumedEntireMessage();
}

constexpr size_t kLineBytes = 96;  // room a line: squeue's default line is about 80 bytes
constexpr size_t kMostReserved = 1 << 16;  // lines room is made for at first (a hint may be all the queue)

}  // namespace

void clear_reusing(pb::Job& job) {
  pb::JobSpec* spec = job.release_spec();
  job.Clear();
  if (spec) {
    spec->Clear();
    job.set_allocated_spec(spec);
  }
}

ListingText::ListingText(std::string& out, int64_t now, const ColumnFormat& format, std::string_view sort_keys,
                         bool header, bool one_per_task, size_t jobs_hint)
    : out_(out), now_(now), format_(format), one_per_task_(one_per_task), table_(sort_keys, now) {
  out_.reserve(out_.size() + (std::min(jobs_hint, kMostReserved) + 1) * kLineBytes);
  if (header) append_header(out_, format_);
  lines_from_ = out_.size();
  starts_.reserve(std::min(jobs_hint, kMostReserved));
  table_.reserve(std::min(jobs_hint, kMostReserved));
}

bool ListingText::add(const pb::Job& j) {
  if (!one_per_task_ && joins_array_row(j) && !alone_.emplace(j.array_job_id(), listed_line_key(j)).second)
    return false;  // two that show as one row
  table_.add(j);
  starts_.push_back(out_.size());
  append_row(out_, row_as_sent(j), now_, format_, scratch_);
  return true;
}

void ListingText::finish() {
  std::vector<size_t> order = table_.order();
  if (order.empty()) return;  // in order already (the controller lists by id)
  std::string lines = out_.substr(lines_from_);
  starts_.push_back(out_.size());
  out_.resize(lines_from_);
  for (size_t k : order) out_.append(lines, starts_[k] - lines_from_, starts_[k + 1] - starts_[k]);
}

bool listing_is_brief(const ColumnFormat& format, std::string_view sort_keys) {
  auto brief = [](char c) { return net::kBriefFields.find(c) != std::string_view::npos; };
  for (const FormatItem& item : format.items)
    if (item.field != 0 && !brief(item.field)) return false;
  for (char c : sort_keys)
    if (c != ',' && c != '+' && c != '-' && !brief(c)) return false;
  return true;
}

Result<std::optional<std::string>> format_records(const std::vector<std::string_view>& records, int64_t now,
                                                  const ColumnFormat& format, std::string_view sort_keys, bool header,
                                                  bool one_per_task) {
  std::string lines;
  ListingText text(lines, now, format, sort_keys, header, one_per_task, records.size());
  pb::Job job;
  for (std::string_view record : records) {
    if (!parse_reusing(record, job)) return invalid("undecodable job record in the controller's reply");
    if (!text.add(job)) return std::optional<std::string>();
  }
  text.finish();
  return std::optional<std::string>(std::move(lines));
}

}  // namespace hq::cmd
