// Reading Protocol Buffers' wire format by hand where parsing whole messages would cost
// more than the work itself: a field's bytes as a view, a field skipped, and a listing's
// reply whose thousands of job records are left unparsed (squeue parses them one at a
// time into one message, cmd/client/queue_stream). Everything else is protobuf's own
// parse. Pure; any thread.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "core/status.hpp"
#include "hq.pb.h"

namespace google::protobuf::io {
class CodedInputStream;
}

namespace hq::net {

// A length-delimited field's bytes (its length read from `in`), as a view into `all`,
// the input `in` reads. False: malformed or past the end.
bool read_bytes(google::protobuf::io::CodedInputStream& in, std::string_view all, std::string_view& out);
// Skips the value of a field whose tag was just read. False: malformed, or a group (which
// hq never writes).
bool skip_field(google::protobuf::io::CodedInputStream& in, uint32_t tag);

// An Envelope with its QueueReply's job records as views into the frame they came in
// (each a serialized pb::Job), and the listing's text (QueueReply.listing) as one, and
// everything else parsed: the seq, an error, the reply's `now`, `more` and unknown ids
// (`rest.queue_reply()` without jobs or listing).
struct UnparsedJobs {
  pb::Envelope rest;
  std::vector<std::string_view> jobs;
  std::optional<std::string_view> listing;
};
// Reads `frame` as protobuf would (fields in any order, a message field given twice
// merged, a bytes field given twice the last, unknown fields skipped) without parsing the
// job records or copying the listing. Invalid: malformed, a
// group (which hq never writes; protobuf would skip an unknown one), or the reply beside
// another member of the Envelope's oneof.
Result<UnparsedJobs> split_queue_reply(std::string_view frame);

}  // namespace hq::net
