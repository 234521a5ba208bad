// squeue's brief listing rendered in the controller (QueueRequest.render): each listed job
// made into its brief record (net::to_pb_brief, one pb::Job reused) and given to the
// client's own formatter (cmd/client/queue_stream's ListingText), its text written into the
// reply's buffer as QueueReply.listing. The client then prints it as it comes: no records
// to parse, sort or format there (most of a 5,000-job squeue's time). The same text the
// client would make from the records, by the same code. Event loop thread only.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cmd/client/queue_stream.hpp"
#include "core/job.hpp"
#include "hq.pb.h"

namespace hq::cmd {

class ListingRenderer {
 public:
  // Rendering into `out` (which holds the frame's head room), at most `most_bytes` of
  // text, unless the request's columns or keys read more than a brief record carries, or
  // ask for more work than squeue's options ever do (-o/-O over 1 KiB or 128 columns, -S
  // over 64 bytes, lines of more than 64 KiB whatever the jobs: the client then formats
  // the records itself), or `jobs_at_most` lines (all the listing may hold) could take
  // more than `most_bytes`.
  ListingRenderer(const pb::ListingRender& render, int64_t now, std::string& out, size_t most_bytes,
                  size_t jobs_at_most);
  ListingRenderer(const ListingRenderer&) = delete;
  ListingRenderer& operator=(const ListingRenderer&) = delete;
  bool usable() const { return text_.has_value(); }
  // One row (usable() only): `job`, standing for the array's pending `tasks` where not
  // empty. False when it cannot be rendered here (an array's pending tasks to group, more
  // than most_bytes): the listing then goes as records.
  bool add(const Job& job, std::string_view tasks);
  // The reply's fields after the text (now, the unknown ids); returns where the QueueReply
  // starts in `out` (net::frame_queue_reply_in_place).
  size_t finish(const std::vector<uint64_t>& unknown_ids);
  // Takes back what was written into `out`.
  void abandon();
  // Until when (exclusive) the text stays what it is while no job changes
  // (core listed_line_valid_until of every row).
  int64_t valid_until() const { return valid_until_; }
  // The text written so far (after finish: all of it).
  std::string_view text() const { return std::string_view(out_).substr(text_from_, text_bytes_); }

 private:
  std::string& out_;
  size_t start_;      // out's size before
  size_t text_from_;  // where the text starts, after the field's head room
  size_t most_bytes_;
  int64_t now_;
  int64_t valid_until_;
  size_t text_bytes_ = 0;
  ColumnFormat format_;
  std::string sort_;
  std::optional<ListingText> text_;
  pb::Job row_;
};

}  // namespace hq::cmd
