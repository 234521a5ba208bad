#include "net/wire_read.hpp"

#include <google/protobuf/io/coded_stream.h>

#include <climits>
#include <optional>
#include <string>

#include "net/wire_type.hpp"

namespace hq::net {

using google::protobuf::io::CodedInputStream;

bool read_bytes(CodedInputStream& in, std::string_view all, std::string_view& out) {
  uint32_t size = 0;
  if (!in.ReadVarint32(&size)) return false;
  auto at = static_cast<size_t>(in.CurrentPosition());
  if (size > all.size() - at) return false;
  out = all.substr(at, size);
  return in.Skip(static_cast<int>(size));
}

bool skip_field(CodedInputStream& in, uint32_t tag) {
  uint64_t varint = 0;
  uint32_t size = 0;
  switch (tag & 7) {
    case kVarint: return in.ReadVarint64(&varint);
    case kFixed64: return in.Skip(8);
    case kLengthDelimited: return in.ReadVarint32(&size) && size <= INT_MAX && in.Skip(static_cast<int>(size));
    case kFixed32: return in.Skip(4);
    default: return false;  // groups (never written by hq) or no wire type at all
  }
}

namespace {

constexpr uint32_t kQueueReplyTag = field_tag(13, kLengthDelimited);  // Envelope.queue_reply
constexpr uint32_t kJobsTag = field_tag(1, kLengthDelimited);         // QueueReply.jobs
constexpr uint32_t kListingTag = field_tag(6, kLengthDelimited);      // QueueReply.listing

// Reads the fields of the message `bytes` as protobuf's parser meets them: those that
// `take(in, tag)` takes (it returns false when one is malformed), and the bytes of each
// other field appended to `rest`, tag and all, for protobuf to parse. False: malformed.
template <typename Take>
bool scan_fields(std::string_view bytes, std::string& rest, Take&& take) {
  if (bytes.size() > INT_MAX) return false;
  CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()), static_cast<int>(bytes.size()));
  while (static_cast<size_t>(in.CurrentPosition()) < bytes.size()) {
    auto field_at = static_cast<size_t>(in.CurrentPosition());
    uint32_t tag = in.ReadTag();  // 0: malformed
    if (tag >> 3 == 0) return false;
    if (std::optional<bool> taken = take(in, tag)) {
      if (!*taken) return false;
      continue;
    }
    if (!skip_field(in, tag)) return false;
    rest.append(bytes.substr(field_at, static_cast<size_t>(in.CurrentPosition()) - field_at));
  }
  return true;
}

}  // namespace

Result<UnparsedJobs> split_queue_reply(std::string_view frame) {
  UnparsedJobs out;
  std::string envelope, reply;  // the fields not taken, for protobuf's parse
  bool has_reply = false;
  auto take_job = [&](CodedInputStream& in, uint32_t tag, std::string_view body) -> std::optional<bool> {
    if (tag == kListingTag) return read_bytes(in, body, out.listing.emplace());
    if (tag != kJobsTag) return std::nullopt;
    return read_bytes(in, body, out.jobs.emplace_back());
  };
  auto take_reply = [&](CodedInputStream& in, uint32_t tag) -> std::optional<bool> {
    if (tag != kQueueReplyTag) return std::nullopt;
    has_reply = true;  // given twice, the two merge: their jobs follow each other
    std::string_view body;
    if (!read_bytes(in, frame, body)) return false;
    return scan_fields(body, reply, [&](CodedInputStream& inner, uint32_t t) { return take_job(inner, t, body); });
  };
  // A reply beside another of the Envelope's oneof members (an error, say): protobuf would
  // keep whichever came last, and a controller never sends both. Refused.
  bool ok = scan_fields(frame, envelope, take_reply) &&
            out.rest.ParseFromArray(envelope.data(), static_cast<int>(envelope.size())) &&
            (!has_reply || (out.rest.msg_case() == pb::Envelope::MSG_NOT_SET &&
                            out.rest.mutable_queue_reply()->MergeFromString(reply)));
  if (!ok) return invalid("undecodable queue reply");
  return out;
}

}  // namespace hq::net
