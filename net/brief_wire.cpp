#include "net/brief_wire.hpp"

#include <cstring>

#include "core/job_reason.hpp"
#include "net/frame.hpp"
#include "net/wire_type.hpp"

namespace hq::net {
namespace {

constexpr size_t kMaxVarint = 10;
constexpr size_t kMaxField = 2 + kMaxVarint;  // a tag (fields < 2048) and a varint value

size_t varint_size(uint64_t v) {
  size_t n = 1;
  for (; v >= 0x80; v >>= 7) ++n;
  return n;
}

// Writes fields at a raw position inside room made for them beforehand (a listing writes
// thousands of records: no capacity check per byte). proto3's encoding: fields at their
// default are left out; negative int32/int64 are 10-byte varints.
class RawWriter {
 public:
  explicit RawWriter(char* at) : p_(at) {}
  char* position() const { return p_; }

  void varint(uint64_t v) {
    while (v >= 0x80) {
      *p_++ = static_cast<char>((v & 0x7f) | 0x80);
      v >>= 7;
    }
    *p_++ = static_cast<char>(v);
  }
  void tag(uint32_t field, WireType type) { varint(field_tag(field, type)); }
  void int_field(uint32_t field, int64_t v) {
    if (v == 0) return;
    tag(field, kVarint);
    varint(static_cast<uint64_t>(v));
  }
  void uint_field(uint32_t field, uint64_t v) {
    if (v == 0) return;
    tag(field, kVarint);
    varint(v);
  }
  void bytes_field(uint32_t field, std::string_view s, bool even_empty = false) {
    if (s.empty() && !even_empty) return;
    tag(field, kLengthDelimited);
    varint(s.size());
    std::memcpy(p_, s.data(), s.size());
    p_ += s.size();
  }
  template <typename Int>
  void packed(uint32_t field, const std::vector<Int>& values) {
    if (values.empty()) return;
    auto wire = [](Int v) { return static_cast<uint64_t>(static_cast<int64_t>(v)); };  // int32: sign-extended
    size_t len = 0;
    for (Int v : values) len += varint_size(wire(v));
    tag(field, kLengthDelimited);
    varint(len);
    for (Int v : values) varint(wire(v));
  }
  // A nested message written by `body` behind its tag and length: the body goes in after
  // one byte for the length (most records are shorter than 128 bytes), and is moved right
  // when its length needs more (the room made counts kMaxVarint for that).
  template <typename Body>
  void message(uint32_t field, Body&& body) {
    tag(field, kLengthDelimited);
    char* length_at = p_++;
    body(*this);
    size_t len = static_cast<size_t>(p_ - (length_at + 1));
    size_t length_size = varint_size(len);
    if (length_size > 1) std::memmove(length_at + length_size, length_at + 1, len);
    p_ = length_at;
    varint(len);
    p_ += len;
  }

 private:
  char* p_;
};

// pb::NodeAlloc (net::to_pb(NodeAlloc)).
void put_alloc(const NodeAlloc& a, RawWriter& w) {
  w.bytes_field(1, a.node);
  w.int_field(2, a.cpus);
  w.int_field(3, a.mem_mib);
  w.int_field(4, a.tasks);
  w.packed(5, a.gpus);
}

// The brief pb::JobSpec (to_pb_brief: name, user, uid, node and task counts, begin).
void put_brief_spec(const JobSpec& s, RawWriter& w) {
  w.bytes_field(1, s.name);
  w.bytes_field(8, s.user);
  w.uint_field(9, s.uid);
  w.int_field(13, s.nodes_min);
  w.int_field(16, s.ntasks);
  w.int_field(19, s.cpus_per_task);
  w.int_field(31, s.begin_time);
}

void put_brief_job(const Job& j, std::string_view hosts, std::string_view array_tasks, RawWriter& w) {
  // In field-number order, as protobuf serializes: the bytes are then exactly its own.
  w.uint_field(1, j.id.value);
  w.message(2, [&](RawWriter& o) { put_brief_spec(j.spec, o); });
  w.bytes_field(3, job_state_name(j.state));
  w.bytes_field(4, to_string(j.reason));
  w.int_field(5, j.priority);
  w.bytes_field(6, j.partition);
  w.int_field(7, j.time_limit);
  w.int_field(8, j.submit_time);
  w.int_field(9, j.start_time);
  w.int_field(10, j.end_time);
  for (const NodeAlloc& a : j.alloc) w.message(11, [&](RawWriter& o) { put_alloc(a, o); });
  w.bytes_field(15, hosts);
  w.int_field(17, static_cast<int32_t>(j.hold));
  if (j.partitions.size() > 1)
    for (const auto& p : j.partitions) w.bytes_field(18, p, true);  // repeated strings: each, empty ones too
  w.int_field(20, j.eligible_time);
  w.uint_field(21, j.array_job_id);
  if (j.array_job_id) w.int_field(22, j.array_task_id);
  w.int_field(23, j.array_throttle);
  w.int_field(24, j.expected_start);
  w.int_field(41, j.suspended ? 1 : 0);
  w.int_field(42, j.suspend_time);
  w.int_field(44, j.suspended_secs);
  w.bytes_field(48, array_tasks);
}

// At least the bytes put_brief_job writes for `j`, with one nested message around it:
// every field at its longest, every string with its tag and length.
size_t brief_job_bound(const Job& j, std::string_view hosts, std::string_view array_tasks) {
  constexpr size_t kText = kMaxField;  // a string's tag and length
  size_t n = 2 * kMaxField + 25 * kMaxField + 8 * kMaxField;  // two message heads, the job's and the spec's numbers
  n += j.spec.name.size() + j.spec.user.size() + 2 * kText;
  n += job_state_name(j.state).size() + to_string(j.reason).size() + j.partition.size() + hosts.size() + 4 * kText;
  n += array_tasks.size() + kText;
  for (const auto& p : j.partitions) n += p.size() + kText;
  for (const NodeAlloc& a : j.alloc) n += 2 * kMaxField + a.node.size() + 5 * kMaxField + a.gpus.size() * kMaxVarint;
  return n;
}

// Appends what `write` puts into a RawWriter, in room for `bound` bytes.
template <typename Write>
void append_raw(std::string& out, size_t bound, Write&& write) {
  size_t start = out.size();
  out.resize(start + bound);
  RawWriter w(out.data() + start);
  write(w);
  out.resize(static_cast<size_t>(w.position() - out.data()));
}

// `j`'s record, alone or (`entry`) as QueueReply's `jobs` field 1 with its tag and length.
void append_job(const Job& j, std::string_view array_tasks, std::string& out, bool entry) {
  std::string hosts = j.alloc.empty() ? std::string() : alloc_hostlist(j.alloc);
  append_raw(out, brief_job_bound(j, hosts, array_tasks), [&](RawWriter& w) {
    if (!entry) return put_brief_job(j, hosts, array_tasks, w);
    w.message(1, [&](RawWriter& o) { put_brief_job(j, hosts, array_tasks, o); });
  });
}

}  // namespace

void append_brief_job(const Job& j, std::string& out) { append_job(j, {}, out, false); }

size_t append_brief_job_entry(const Job& j, std::string& out, std::string_view array_tasks) {
  size_t start = out.size();
  append_job(j, array_tasks, out, true);
  return out.size() - start;
}

void append_queue_reply_tail(int64_t now, bool more, const std::vector<uint64_t>& unknown_ids, std::string& out) {
  append_raw(out, 3 * kMaxField + unknown_ids.size() * kMaxVarint, [&](RawWriter& w) {
    w.int_field(2, now);
    w.int_field(3, more ? 1 : 0);
    w.packed(4, unknown_ids);
  });
}

std::string queue_reply_envelope_head(uint64_t seq, size_t reply_size) {
  std::string out;
  append_raw(out, 2 * kMaxField, [&](RawWriter& w) {
    w.uint_field(1, seq);
    w.tag(13, kLengthDelimited);  // Envelope.queue_reply
    w.varint(reply_size);
  });
  return out;
}

size_t frame_queue_reply_in_place(uint64_t seq, std::string& buf) {
  return frame_queue_reply_in_place(seq, buf, kQueueReplyHeadRoom);
}

size_t frame_queue_reply_in_place(uint64_t seq, std::string& buf, size_t reply_from) {
  size_t body = buf.size() - reply_from;
  std::string head;
  std::string envelope = queue_reply_envelope_head(seq, body);
  append_frame_header(head, static_cast<uint32_t>(envelope.size() + body));
  head += envelope;
  size_t from = reply_from - head.size();
  buf.replace(from, head.size(), head);
  return from;
}

size_t put_listing_head(std::string& buf, size_t text_from) {
  size_t text = buf.size() - text_from;
  size_t from = text_from - 1 - varint_size(text);
  RawWriter w(buf.data() + from);
  w.tag(6, kLengthDelimited);  // QueueReply.listing
  w.varint(text);
  return from;
}

std::string envelope_with_queue_reply(uint64_t seq, std::string_view reply) {
  return queue_reply_envelope_head(seq, reply.size()) + std::string(reply);
}

}  // namespace hq::net
