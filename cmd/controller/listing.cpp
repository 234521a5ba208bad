#include "cmd/controller/listing.hpp"

#include <algorithm>
#include <limits>

#include "core/cluster_state.hpp"
#include "core/squeue_format.hpp"
#include "net/brief_wire.hpp"
#include "net/convert.hpp"

namespace hq::cmd {

namespace {
// squeue's own options are a few dozen bytes; what is longer (thousands of columns or sort
// keys, each a pass over every job) is the client's to make, not the controller's. So is
// a line of megabytes (thousands of "%.9999i").
constexpr size_t kMostOptionBytes = 1024;
constexpr size_t kMostSortBytes = 64;
constexpr size_t kMostColumns = 128;
constexpr size_t kMostLineBytes = 64 << 10;
constexpr size_t kLeastLineBytes = 8;  // a job id and its line's end, at the least

bool options_in_bounds(const pb::ListingRender& r) {
  return r.format().size() <= kMostOptionBytes && r.fields().size() <= kMostOptionBytes &&
         r.sort().size() <= kMostSortBytes;
}

// The columns as squeue took them: -o's letters, else -O's names, else its default (none
// where the options are out of bounds).
ColumnFormat columns_of(const pb::ListingRender& r) {
  if (!options_in_bounds(r)) return {};
  if (!r.format().empty()) return parse_squeue_format(r.format());
  if (!r.fields().empty()) return parse_squeue_fields(r.fields());
  return parse_squeue_format(kSqueueDefaultFormat);
}

// The least a line takes: its literals and its columns' widths.
size_t least_line_bytes(const ColumnFormat& format) {
  size_t n = 0;
  for (const FormatItem& item : format.items) n += item.literal.size() + static_cast<size_t>(std::max(item.width, 0));
  return n;
}

}  // namespace

ListingRenderer::ListingRenderer(const pb::ListingRender& render, int64_t now, std::string& out, size_t most_bytes,
                                 size_t jobs_at_most)
    : out_(out), start_(out.size()), text_from_(out.size()), most_bytes_(most_bytes), now_(now),
      valid_until_(std::numeric_limits<int64_t>::max()),
      format_(columns_of(render)), sort_(render.sort().empty() ? std::string(kSqueueDefaultSort) : render.sort()) {
  if (!options_in_bounds(render) || format_.items.empty() || format_.items.size() > kMostColumns ||
      !listing_is_brief(format_, sort_) || least_line_bytes(format_) > kMostLineBytes)
    return;
  // A queue whose lines could not fit is not begun: it would be made up to the page, then
  // thrown away for the records (a listing of 100,000 jobs).
  size_t least_line = std::max(least_line_bytes(format_), kLeastLineBytes);
  if (jobs_at_most > most_bytes / least_line) return;
  out_.append(net::kListingHeadRoom, '\0');
  text_from_ = out_.size();
  text_.emplace(out_, now_, format_, sort_, render.header(), render.one_per_task(), jobs_at_most);
}

bool ListingRenderer::add(const Job& job, std::string_view tasks) {
  HQ_CHECK(text_);
  // The row before's spec is kept as it is: to_pb_brief sets each of the spec's fields it
  // writes, whatever the value (JobSpec's Clear was a tenth of a listing's time here).
  pb::JobSpec* spec = row_.release_spec();
  row_.Clear();
  if (spec) row_.set_allocated_spec(spec);
  net::to_pb_brief(job, row_);
  valid_until_ = std::min(valid_until_, listed_line_valid_until(job, now_));
  if (!tasks.empty()) row_.set_array_tasks(std::string(tasks));
  return text_->add(row_) && out_.size() - text_from_ <= most_bytes_;
}

size_t ListingRenderer::finish(const std::vector<uint64_t>& unknown_ids) {
  HQ_CHECK(text_);
  text_->finish();
  text_bytes_ = out_.size() - text_from_;
  size_t reply_from = net::put_listing_head(out_, text_from_);
  net::append_queue_reply_tail(now_, false, unknown_ids, out_);
  return reply_from;
}

void ListingRenderer::abandon() {
  text_.reset();
  out_.resize(start_);
}

}  // namespace hq::cmd
