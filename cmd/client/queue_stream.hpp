// squeue's listing made a job at a time: each job's line formatted and its sort keys kept
// as it comes, then the lines in squeue -S's order. The client makes it from the records
// of a reply (format_records: each serialized record parsed into one pb::Job, which the
// next reuses), and the controller from its jobs when the request asks it to
// (QueueRequest.render, cmd/controller/listing.cpp), so that the client has only to print
// it. A long listing then costs one record's memory, not the thousands of messages the
// whole reply would parse into. The same text as sort_jobs, queue_rows and print_formatted
// give over the parsed reply (tests/cmd/squeue_brief_test.cpp). One thread.
#pragma once
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cmd/client/queue_format.hpp"
#include "core/column_format.hpp"
#include "core/status.hpp"

namespace hq::cmd {

// The lines of a listing, appended to `out` (from where it ends when this is made): the
// header (unless `header` is false), then a line per job added; finish() puts the lines
// in the order of `sort_keys`. `out` and `format` must outlive this (both are held by
// reference), and `out` grows only through it.
class ListingText {
 public:
  ListingText(std::string& out, int64_t now, const ColumnFormat& format, std::string_view sort_keys, bool header,
              bool one_per_task, size_t jobs_hint);
  ListingText(const ListingText&) = delete;
  ListingText& operator=(const ListingText&) = delete;
  // False, with nothing added, when `j` is a pending task of an array that another task
  // added shows on the same row (unless `one_per_task`, -r): the jobs must be grouped
  // first (QueueRequest.collapse_arrays, queue_rows).
  bool add(const pb::Job& j);
  // The lines in sort order. Once, after the last add.
  void finish();

 private:
  std::string& out_;
  size_t lines_from_;  // where the first job's line starts (after the header)
  int64_t now_;
  const ColumnFormat& format_;
  bool one_per_task_;
  SortTable table_;
  std::vector<size_t> starts_;  // where each job's line starts
  std::set<std::pair<uint64_t, std::string>> alone_;  // an array's pending tasks that came ungrouped, by line
  std::string scratch_;
};

// `job` cleared for the next record without freeing its memory: its strings keep their
// buffers, and its spec stays where it is (protobuf's Clear of a message on the heap frees
// a proto3 message field, and the next parse or set allocates it anew). A record without
// a spec shows an empty one, as the default instance does.
void clear_reusing(pb::Job& job);

// Whether every column and sort key reads only what a brief listing carries
// (net::kBriefFields): what the controller sends to list (QueueRequest.brief) or render.
bool listing_is_brief(const ColumnFormat& format, std::string_view sort_keys);

// The header line (unless `header` is false) and a line per record. nullopt when two
// records are pending tasks of one array that squeue shows as one row (unless
// `one_per_task`, -r) and the controller has not grouped (QueueRequest.collapse_arrays):
// queue_rows must see them all. Invalid when a record does not parse.
Result<std::optional<std::string>> format_records(const std::vector<std::string_view>& records, int64_t now,
                                                  const ColumnFormat& format, std::string_view sort_keys, bool header,
                                                  bool one_per_task);

}  // namespace hq::cmd
