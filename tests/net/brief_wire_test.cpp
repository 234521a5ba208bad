// The controller's brief listing written straight to the wire (net/brief_wire) gives the
// very bytes of building each pb::Job with to_pb_brief and serializing it, over random
// jobs that vary every field the listing carries (negative values, arrays, allocations
// with GPUs, several partitions, empty and odd strings); and the reply around them parses
// back to what was written.
#include <doctest/doctest.h>

#include <random>

#include "hq.pb.h"
#include "net/brief_wire.hpp"
#include "net/convert.hpp"
#include "net/frame.hpp"
#include "net/wire_read.hpp"

using namespace hq;

namespace {

Job random_job(std::mt19937_64& rng) {
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  auto text = [&](int max) {
    std::string s;
    for (int64_t n = pick(0, max); n > 0; --n) s.push_back(static_cast<char>(pick(0, 1) ? pick('a', 'z') : pick(1, 255)));
    return s;
  };
  auto num = [&]() -> int64_t {
    switch (pick(0, 3)) {
      case 0: return 0;
      case 1: return pick(-5, 5);
      case 2: return pick(INT32_MIN, INT32_MAX);
      default: return pick(INT64_MIN / 2, INT64_MAX / 2);
    }
  };
  Job j;
  j.id = JobId{static_cast<uint64_t>(pick(1, INT64_MAX))};
  j.state = static_cast<JobState>(pick(0, 9));
  j.reason = static_cast<JobReason>(pick(0, static_cast<int64_t>(kJobReasonCount) - 1));
  j.priority = num();
  j.partition = pick(0, 1) ? "debug" : "";
  for (int64_t n = pick(0, 3); n > 0; --n) j.partitions.push_back(pick(0, 4) ? "p" + std::to_string(pick(0, 9)) : "");
  j.time_limit = num();
  j.submit_time = num(), j.start_time = num(), j.end_time = num(), j.eligible_time = num();
  for (int64_t n = pick(0, 3); n > 0; --n) {
    NodeAlloc a{"n" + std::to_string(pick(0, 20)), static_cast<int32_t>(num()), num(), static_cast<int32_t>(num()), {}};
    for (int64_t g = pick(0, 3); g > 0; --g) a.gpus.push_back(static_cast<int32_t>(pick(-2, 200)));
    j.alloc.push_back(a);
  }
  j.hold = static_cast<HoldKind>(pick(0, 2));
  j.array_job_id = pick(0, 1) ? static_cast<uint64_t>(pick(0, INT64_MAX)) : 0;
  j.array_task_id = static_cast<int32_t>(pick(0, 1) ? -1 : num());
  j.array_throttle = static_cast<int32_t>(pick(-1, 5));
  j.expected_start = num();
  j.suspended = pick(0, 1);
  j.suspend_time = num(), j.suspended_secs = num();
  j.spec.name = pick(0, 9) ? text(20) : std::string(static_cast<size_t>(pick(100, 20000)), 'x');  // lengths of 2 and 3 bytes
  j.spec.user = text(10);
  j.spec.uid = static_cast<uint32_t>(pick(0, UINT32_MAX));
  j.spec.nodes_min = static_cast<int32_t>(num());
  j.spec.ntasks = static_cast<int32_t>(num());
  j.spec.cpus_per_task = static_cast<int32_t>(num());
  j.spec.begin_time = num();
  // Fields a brief record leaves out: they must not change its bytes.
  j.exit_code = static_cast<int32_t>(num());
  j.submit_key = text(8);
  j.spec.account = text(6);
  return j;
}

}  // namespace

TEST_CASE("brief wire: every random job's record is byte for byte what to_pb_brief serializes") {
  std::mt19937_64 rng(20261128);
  for (int i = 0; i < 3000; ++i) {
    Job j = random_job(rng);
    pb::Job p;
    net::to_pb_brief(j, p);
    std::string want = p.SerializeAsString(), got;
    net::append_brief_job(j, got);
    INFO("job " << i);
    REQUIRE(got == want);
  }
}

TEST_CASE("brief wire: a QueueReply and its Envelope made of entries parse back to the records, now, more and unknown ids") {
  std::mt19937_64 rng(7);
  std::vector<Job> jobs;
  std::string reply;
  size_t sizes = 0;
  for (int i = 0; i < 50; ++i) {
    jobs.push_back(random_job(rng));
    sizes += net::append_brief_job_entry(jobs.back(), reply);
  }
  CHECK(sizes == reply.size());
  net::append_queue_reply_tail(1795858035, true, {7, 300, 1ull << 40}, reply);
  pb::Envelope env;
  REQUIRE(env.ParseFromString(net::envelope_with_queue_reply(42, reply)));
  CHECK(env.seq() == 42);
  REQUIRE(env.has_queue_reply());
  const pb::QueueReply& q = env.queue_reply();
  REQUIRE(q.jobs_size() == 50);
  for (int i = 0; i < 50; ++i) {
    pb::Job p;
    net::to_pb_brief(jobs[static_cast<size_t>(i)], p);
    CHECK(q.jobs(i).SerializeAsString() == p.SerializeAsString());
  }
  CHECK(q.now() == 1795858035);
  CHECK(q.more());
  CHECK(std::vector<uint64_t>(q.unknown_ids().begin(), q.unknown_ids().end()) == std::vector<uint64_t>{7, 300, 1ull << 40});
  pb::Envelope empty;  // nothing but the seq 0 and an empty reply
  REQUIRE(empty.ParseFromString(net::envelope_with_queue_reply(0, "")));
  CHECK(empty.has_queue_reply());
  CHECK(empty.queue_reply().jobs_size() == 0);
}

TEST_CASE("brief wire: a reply framed in place is the frame of the same Envelope, for bodies of every size class") {
  std::mt19937_64 rng(11);
  for (size_t jobs : {0, 1, 3, 200, 3000}) {  // lengths whose varints take 1, 2 and 3 bytes
    for (uint64_t seq : {0ull, 1ull, 300ull, 1ull << 62}) {
      std::string body;
      for (size_t i = 0; i < jobs; ++i) net::append_brief_job_entry(random_job(rng), body);
      net::append_queue_reply_tail(1795858035, false, {}, body);
      std::string buf(net::kQueueReplyHeadRoom, '\x5a');
      buf += body;
      size_t from = net::frame_queue_reply_in_place(seq, buf);
      std::string expected;
      net::append_frame(expected, net::envelope_with_queue_reply(seq, body));
      CHECK(buf.substr(from) == expected);
      CHECK(buf.find_first_not_of('\x5a') == from);  // only the room's end was written
    }
  }
}

TEST_CASE("brief wire: a listing's text framed in place parses as the Envelope protobuf makes of it") {
  for (size_t size : {size_t{0}, size_t{1}, size_t{127}, size_t{128}, size_t{16383}, size_t{16384}, size_t{3} << 20}) {
    CAPTURE(size);
    std::string text(size, 'x');
    for (size_t i = 0; i < size; i += 7) text[i] = '\n';
    std::string buf(net::kQueueReplyHeadRoom + net::kListingHeadRoom, '\x5a');
    size_t text_from = buf.size();
    buf += text;
    size_t reply_from = net::put_listing_head(buf, text_from);
    net::append_queue_reply_tail(1795858035, false, {4, 9}, buf);
    size_t from = net::frame_queue_reply_in_place(300, buf, reply_from);
    pb::Envelope env;
    env.set_seq(300);
    pb::QueueReply* q = env.mutable_queue_reply();
    q->set_listing(text);
    q->set_now(1795858035);
    q->add_unknown_ids(4);
    q->add_unknown_ids(9);
    std::string payload = buf.substr(from + 4), framed;  // the text comes first, protobuf's order last
    net::append_frame(framed, payload);
    CHECK(buf.substr(from) == framed);  // the frame's length
    pb::Envelope got;
    REQUIRE(got.ParseFromString(payload));
    CHECK(got.SerializeAsString() == env.SerializeAsString());
    CHECK(buf.find_first_not_of('\x5a') == from);  // only the room's end was written
    auto parts = net::split_queue_reply(std::string_view(buf).substr(from + 4));
    REQUIRE(parts);
    REQUIRE(parts->listing);
    CHECK(*parts->listing == text);  // a view into the frame, not a copy
    CHECK((parts->listing->data() >= buf.data() && parts->listing->data() <= buf.data() + buf.size()));
    CHECK(!parts->rest.queue_reply().has_listing());
    CHECK(parts->rest.queue_reply().unknown_ids_size() == 2);
  }
}

TEST_CASE("wire read: a listing's text is read as protobuf reads it: absent, empty, or the last of two") {
  pb::Envelope env;
  env.mutable_queue_reply()->set_now(5);
  auto none = net::split_queue_reply(env.SerializeAsString());
  REQUIRE(none);
  CHECK(!none->listing);  // the records' reply, from a controller that made no text
  env.mutable_queue_reply()->set_listing("");
  auto empty = net::split_queue_reply(env.SerializeAsString());
  REQUIRE(empty);
  REQUIRE(empty->listing);  // squeue -h of no jobs: nothing to print, but made
  CHECK(empty->listing->empty());
  pb::Envelope first, second;
  first.mutable_queue_reply()->set_listing("first\n");
  second.mutable_queue_reply()->set_listing("second\n");
  std::string twice = first.SerializeAsString() + second.SerializeAsString();
  pb::Envelope whole;
  REQUIRE(whole.ParseFromString(twice));
  auto parts = net::split_queue_reply(twice);
  REQUIRE(parts);
  REQUIRE(parts->listing);
  CHECK(*parts->listing == whole.queue_reply().listing());
}

namespace {

// An Envelope of a QueueReply of `n` random brief jobs.
pb::Envelope random_queue_envelope(std::mt19937_64& rng, int n) {
  pb::Envelope env;
  env.set_seq(9);
  pb::QueueReply* q = env.mutable_queue_reply();
  for (int i = 0; i < n; ++i) net::to_pb_brief(random_job(rng), *q->add_jobs());
  q->set_now(1795858035);
  q->set_more(n % 2 == 1);
  q->add_unknown_ids(77);
  return env;
}

// Every record of `parts`, in order, against the jobs of `q`.
void check_split(const net::UnparsedJobs& parts, const pb::QueueReply& q) {
  REQUIRE(parts.jobs.size() == static_cast<size_t>(q.jobs_size()));
  for (int i = 0; i < q.jobs_size(); ++i) CHECK(parts.jobs[static_cast<size_t>(i)] == q.jobs(i).SerializeAsString());
  pb::QueueReply without = q;
  without.clear_jobs();
  CHECK(parts.rest.queue_reply().SerializeAsString() == without.SerializeAsString());
}

}  // namespace

TEST_CASE("wire read: a queue reply's job records are split off unparsed, and the rest parses as protobuf reads it") {
  std::mt19937_64 rng(11);
  for (int n : {0, 1, 2, 50}) {
    CAPTURE(n);
    pb::Envelope env = random_queue_envelope(rng, n);
    std::string frame = env.SerializeAsString();
    auto parts = net::split_queue_reply(frame);
    REQUIRE(parts);
    CHECK(parts->rest.seq() == 9);
    CHECK(parts->rest.has_queue_reply());
    for (std::string_view job : parts->jobs) CHECK((job.data() >= frame.data() && job.data() + job.size() <= frame.data() + frame.size()));
    check_split(*parts, env.queue_reply());
  }
  // Fields in another order, a reply given twice (protobuf merges: its jobs follow each
  // other), and fields hq does not know, which are skipped.
  pb::Envelope a = random_queue_envelope(rng, 3), b = random_queue_envelope(rng, 4);
  std::string tail_first;
  pb::QueueReply tail;
  tail.set_now(5);
  tail.add_unknown_ids(1);
  std::string unknown = std::string("\xf8\x07\x05", 3) + std::string("\xfa\x07\x02hi", 5) + std::string("\xfd\x07\x01\x02\x03\x04", 6) +
                        std::string("\xf9\x07", 2) + std::string(8, '\x01');  // fields 127: varint, bytes, fixed32, fixed64
  std::string tail_bytes = unknown + tail.SerializeAsString() + unknown;  // in the reply too
  tail_first += std::string("\x6a") + static_cast<char>(tail_bytes.size()) + tail_bytes;  // Envelope.queue_reply (13)
  std::string frame = tail_first + unknown + a.SerializeAsString() + b.SerializeAsString();
  pb::Envelope whole;
  REQUIRE(whole.ParseFromString(frame));
  auto parts = net::split_queue_reply(frame);
  REQUIRE(parts);
  CHECK(parts->rest.seq() == whole.seq());
  check_split(*parts, whole.queue_reply());
  // An answer that is an error comes whole, with no records.
  pb::Envelope error;
  error.set_seq(3);
  error.mutable_error()->set_message("no");
  auto err = net::split_queue_reply(error.SerializeAsString());
  REQUIRE(err);
  CHECK(err->rest.error().message() == "no");
  CHECK(err->jobs.empty());
}

TEST_CASE("wire read: a malformed queue reply is refused, wherever it breaks") {
  std::mt19937_64 rng(5);
  std::string frame = random_queue_envelope(rng, 6).SerializeAsString();
  for (size_t cut = 1; cut < frame.size(); cut += 7) {  // every cut falls inside a field
    CAPTURE(cut);
    CHECK(!net::split_queue_reply(std::string_view(frame).substr(0, cut)));
  }
  CHECK(!net::split_queue_reply(std::string("\x6a\x02\x0a\x09", 4)));  // a job longer than its reply
  CHECK(!net::split_queue_reply(std::string("\x6a\x02\x0b\x0c", 4)));  // a group in the reply
  CHECK(!net::split_queue_reply(std::string("\x00\x01", 2)));          // field 0
  // A reply beside an error in the Envelope's oneof, in either order: protobuf keeps the
  // last; a controller never sends both.
  pb::Envelope reply = random_queue_envelope(rng, 2), error;
  error.mutable_error()->set_message("denied");
  CHECK(!net::split_queue_reply(reply.SerializeAsString() + error.SerializeAsString()));
  CHECK(!net::split_queue_reply(error.SerializeAsString() + reply.SerializeAsString()));
  CHECK(!net::split_queue_reply(std::string("\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 12)));  // a varint too long
}
