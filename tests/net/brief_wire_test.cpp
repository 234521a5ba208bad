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
