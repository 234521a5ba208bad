#include "net/brief_wire.hpp"

#include "core/job_reason.hpp"
#include "net/frame.hpp"

namespace hq::net {
namespace {

enum Wire : uint32_t { kVarint = 0, kLen = 2 };

void put_varint(uint64_t v, std::string& out) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}
size_t varint_size(uint64_t v) {
  size_t n = 1;
  for (; v >= 0x80; v >>= 7) ++n;
  return n;
}
void put_tag(uint32_t field, Wire type, std::string& out) { put_varint((static_cast<uint64_t>(field) << 3) | type, out); }

// proto3 leaves out fields at their default; negative int32/int64 are 10-byte varints.
void put_int(uint32_t field, int64_t v, std::string& out) {
  if (v == 0) return;
  put_tag(field, kVarint, out);
  put_varint(static_cast<uint64_t>(v), out);
}
void put_uint(uint32_t field, uint64_t v, std::string& out) {
  if (v == 0) return;
  put_tag(field, kVarint, out);
  put_varint(v, out);
}
void put_bool(uint32_t field, bool v, std::string& out) { put_int(field, v ? 1 : 0, out); }
void put_bytes(uint32_t field, std::string_view s, std::string& out) {
  if (s.empty()) return;
  put_tag(field, kLen, out);
  put_varint(s.size(), out);
  out.append(s);
}
// A nested message written by `body` into `out`, behind its tag and length: the body goes
// in first, then is moved right by the length's size (a record is small).
template <typename Body>
void put_message(uint32_t field, std::string& out, Body&& body) {
  put_tag(field, kLen, out);
  size_t at = out.size();
  body(out);
  size_t len = out.size() - at;
  std::string prefix;
  put_varint(len, prefix);
  out.insert(at, prefix);
}

// A packed repeated integer field (proto3's default for them); nothing when empty.
template <typename Int>
void put_packed(uint32_t field, const std::vector<Int>& values, std::string& out) {
  if (values.empty()) return;
  auto wire = [](Int v) { return static_cast<uint64_t>(static_cast<int64_t>(v)); };  // int32: sign-extended
  size_t len = 0;
  for (Int v : values) len += varint_size(wire(v));
  put_tag(field, kLen, out);
  put_varint(len, out);
  for (Int v : values) put_varint(wire(v), out);
}

// pb::NodeAlloc (net::to_pb(NodeAlloc)).
void put_alloc(const NodeAlloc& a, std::string& out) {
  put_bytes(1, a.node, out);
  put_int(2, a.cpus, out);
  put_int(3, a.mem_mib, out);
  put_int(4, a.tasks, out);
  put_packed(5, a.gpus, out);
}

// The brief pb::JobSpec (to_pb_brief: name, user, uid, node and task counts, begin).
void put_brief_spec(const JobSpec& s, std::string& out) {
  put_bytes(1, s.name, out);
  put_bytes(8, s.user, out);
  put_uint(9, s.uid, out);
  put_int(13, s.nodes_min, out);
  put_int(16, s.ntasks, out);
  put_int(19, s.cpus_per_task, out);
  put_int(31, s.begin_time, out);
}

}  // namespace

void append_brief_job(const Job& j, std::string& out) {
  // In field-number order, as protobuf serializes: the bytes are then exactly its own.
  put_uint(1, j.id.value, out);
  put_message(2, out, [&](std::string& o) { put_brief_spec(j.spec, o); });
  put_bytes(3, job_state_name(j.state), out);
  put_bytes(4, to_string(j.reason), out);
  put_int(5, j.priority, out);
  put_bytes(6, j.partition, out);
  put_int(7, j.time_limit, out);
  put_int(8, j.submit_time, out);
  put_int(9, j.start_time, out);
  put_int(10, j.end_time, out);
  for (const NodeAlloc& a : j.alloc) put_message(11, out, [&](std::string& o) { put_alloc(a, o); });
  if (!j.alloc.empty()) put_bytes(15, alloc_hostlist(j.alloc), out);
  put_int(17, static_cast<int32_t>(j.hold), out);
  if (j.partitions.size() > 1)
    for (const auto& p : j.partitions) {  // repeated strings: each, empty ones too
      put_tag(18, kLen, out);
      put_varint(p.size(), out);
      out.append(p);
    }
  put_int(20, j.eligible_time, out);
  put_uint(21, j.array_job_id, out);
  put_int(22, j.array_task_id, out);
  put_int(23, j.array_throttle, out);
  put_int(24, j.expected_start, out);
  put_bool(41, j.suspended, out);
  put_int(42, j.suspend_time, out);
  put_int(44, j.suspended_secs, out);
}

size_t append_brief_job_entry(const Job& j, std::string& out) {
  size_t start = out.size();
  put_message(1, out, [&](std::string& o) { append_brief_job(j, o); });
  return out.size() - start;
}

void append_queue_reply_tail(int64_t now, bool more, const std::vector<uint64_t>& unknown_ids, std::string& out) {
  put_int(2, now, out);
  put_bool(3, more, out);
  put_packed(4, unknown_ids, out);
}

std::string queue_reply_envelope_head(uint64_t seq, size_t reply_size) {
  std::string out;
  put_uint(1, seq, out);
  put_tag(13, kLen, out);  // Envelope.queue_reply
  put_varint(reply_size, out);
  return out;
}

size_t frame_queue_reply_in_place(uint64_t seq, std::string& buf) {
  size_t body = buf.size() - kQueueReplyHeadRoom;
  std::string head;
  std::string envelope = queue_reply_envelope_head(seq, body);
  append_frame_header(head, static_cast<uint32_t>(envelope.size() + body));
  head += envelope;
  size_t from = kQueueReplyHeadRoom - head.size();
  buf.replace(from, head.size(), head);
  return from;
}

std::string envelope_with_queue_reply(uint64_t seq, std::string_view reply) {
  return queue_reply_envelope_head(seq, reply.size()) + std::string(reply);
}

}  // namespace hq::net
