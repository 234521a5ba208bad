// squeue's listing made as its job records are read: each serialized record parsed into
// one pb::Job, which the next reuses, its line formatted and its sort keys kept; then the
// lines in squeue -S's order. A long listing then costs its client one record's memory,
// not the thousands of messages the whole reply would parse into (most of a 5,000-job
// squeue's time was the kernel zeroing their pages). The same text as sort_jobs,
// queue_rows and print_formatted give over the parsed reply (tests/cmd/squeue_brief_test.cpp).
// One thread (a client's).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/column_format.hpp"
#include "core/status.hpp"

namespace hq::cmd {

// The header line (unless `header` is false) and a line per record. nullopt when two
// records are pending tasks of one array that squeue shows as one row (unless
// `one_per_task`, -r) and the controller has not grouped (QueueRequest.collapse_arrays):
// queue_rows must see them all. Invalid when a record does not parse.
Result<std::optional<std::string>> format_records(const std::vector<std::string_view>& records, int64_t now,
                                                  const ColumnFormat& format, std::string_view sort_keys, bool header,
                                                  bool one_per_task);

}  // namespace hq::cmd
