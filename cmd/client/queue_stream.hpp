// squeue's listing printed as its job records are read: each serialized record parsed into
// one pb::Job, which the next reuses, its line formatted and its sort keys kept; then the
// lines in squeue -S's order, in one write. For a reply whose every record is one row (the
// controller grouped the arrays' pending tasks, or -r): a long listing then costs its
// client one record's memory, not the thousands of messages the whole reply would parse
// into (most of a 5,000-job squeue's time was the kernel zeroing their pages). The same
// lines as sort_jobs, queue_rows and print_formatted over the parsed reply
// (tests/cmd/squeue_brief_test.cpp). One thread (a client's).
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/column_format.hpp"
#include "core/status.hpp"

namespace hq::cmd {

// The header line (unless `header` is false) and a line per record, on stdout. Invalid
// (and nothing printed) when a record does not parse.
Status print_records(const std::vector<std::string_view>& records, int64_t now, const ColumnFormat& format,
                     std::string_view sort_keys, bool header);

}  // namespace hq::cmd
