#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/hostlist.hpp"
#include "net/convert.hpp"
#include "net/frame.hpp"

using namespace hq;
using namespace hq::net;

namespace {
// `wire` fed to `d` in reads of `read` bytes, as a socket brings it: the frames decoded.
std::vector<std::string> decode_in_reads(FrameDecoder& d, const std::string& wire, size_t read) {
  std::vector<std::string> got;
  for (size_t at = 0; at < wire.size(); at += read) {
    d.feed(wire.data() + at, std::min(read, wire.size() - at));
    while (true) {
      auto f = d.next();
      REQUIRE(f.is_ok());
      if (!f->has_value()) break;
      got.push_back(**f);
    }
  }
  return got;
}
}  // namespace

TEST_CASE("frames: split delivery, several per read, oversize") {
  std::string wire = encode_frame("hello") + encode_frame("") + encode_frame(std::string(1000, 'x'));
  FrameDecoder d;
  std::vector<std::string> got = decode_in_reads(d, wire, 1);  // one byte at a time
  REQUIRE(got.size() == 3);
  CHECK(got[0] == "hello");
  CHECK(got[1].empty());
  CHECK(got[2].size() == 1000);
  CHECK(d.buffered() == 0);

  FrameDecoder small(16);
  std::string big = encode_frame(std::string(17, 'y'));
  small.feed(big.data(), 4);
  CHECK(!small.next().is_ok());
}

TEST_CASE("journal events round-trip through protobuf") {
  Job job;
  job.id = JobId{5};
  job.spec.name = "n";
  job.spec.script = "#!/bin/sh\n";
  job.spec.env = {"A=1"};
  job.spec.groups = {4, 5};
  job.partition = "p";
  job.time_limit = 60;
  auto ev = decode_event(encode_event(JobSubmitted{job}));
  REQUIRE(ev.is_ok());
  const Job& back = std::get<JobSubmitted>(*ev).job;
  CHECK(back.id.value == 5);
  CHECK(back.spec.env == job.spec.env);
  CHECK(back.spec.groups == job.spec.groups);
  CHECK(back.time_limit == 60);

  auto started = decode_event(encode_event(JobStarted{JobId{5}, 9, {{"n1", 2, 3, 1}}}));
  REQUIRE(started.is_ok());
  CHECK(std::get<JobStarted>(*started).alloc[0].node == "n1");

  auto ended = decode_event(encode_event(JobEnded{JobId{5}, 10, JobState::kTimeout, 0, 15, JobReason::kRaisedSignal}));
  REQUIRE(ended.is_ok());
  CHECK(std::get<JobEnded>(*ended).state == JobState::kTimeout);
  CHECK(std::get<JobEnded>(*ended).reason == JobReason::kRaisedSignal);
  JobEnded used{JobId{6}, 11, JobState::kOutOfMemory, 0, 9, JobReason::kOutOfMemory};
  used.peak_mem_bytes = 4096;
  used.cpu_time_usec = 0;  // measured as zero: kept apart from "not measured"
  auto with_use = decode_event(encode_event(used));
  REQUIRE(with_use.is_ok());
  CHECK(std::get<JobEnded>(*with_use).peak_mem_bytes == 4096);
  CHECK(std::get<JobEnded>(*with_use).cpu_time_usec == 0);
  CHECK(std::get<JobEnded>(*ended).peak_mem_bytes == -1);
  auto started_gpus = decode_event(encode_event(JobStarted{JobId{5}, 9, {{"g1", 2, 3, 1, {4, 5}}}}));
  CHECK(std::get<JobStarted>(*started_gpus).alloc[0].gpus == std::vector<int32_t>{4, 5});
  auto drain = decode_event(encode_event(NodeDrainChanged{"n7", 12, true, "disk check", 1001}));
  REQUIRE(drain.is_ok());
  CHECK(std::get<NodeDrainChanged>(*drain).node == "n7");
  CHECK(std::get<NodeDrainChanged>(*drain).reason == "disk check");
  CHECK(std::get<NodeDrainChanged>(*drain).uid == 1001);
  CHECK(std::get<NodeDrainChanged>(*drain).time == 12);
  CHECK(!decode_event("\xff\xff garbage").is_ok());
}

namespace {
// One node n1 (4 CPUs, `features`) in partition batch.
ClusterConfig one_node(std::vector<std::string> features = {}) {
  ClusterConfig cfg;
  NodeConfig nc;
  nc.names = {"n1"};
  nc.cpus = 4;
  nc.features = std::move(features);
  cfg.nodes.push_back(nc);
  PartitionConfig p;
  p.name = "batch";
  p.nodes = {"n1"};
  cfg.partitions.push_back(p);
  return cfg;
}
}  // namespace

TEST_CASE("snapshots restore jobs, resources and the id counter") {
  ClusterConfig cfg = one_node();
  ClusterState s = make_state(cfg);
  Job a;
  a.id = JobId{3};
  a.partition = "batch";
  Job b = a;
  b.id = JobId{4};
  hq::apply(s, JobSubmitted{a});
  hq::apply(s, JobSubmitted{b});
  hq::apply(s, JobStarted{JobId{3}, 10, {{"n1", 2, 0, 1}}});
  s.next_job_id = 9;
  ClusterState r = make_state(cfg);
  REQUIRE(restore_snapshot(encode_snapshot(s), r).is_ok());
  CHECK(r.next_job_id == 9);
  CHECK(r.jobs.size() == 2);
  CHECK(find_job(r, JobId{4})->state == JobState::kPending);
  CHECK(r.pending_jobs == 1);
  CHECK(r.nodes.at("n1").alloc_cpus == 2);
  CHECK(!restore_snapshot("not a snapshot \xff", r).is_ok());
}

TEST_CASE("snapshots hold each shared script and environment once and restore them") {
  ClusterConfig cfg;
  PartitionConfig p;
  p.name = "batch";
  cfg.partitions.push_back(p);
  ClusterState s = make_state(cfg);
  for (uint64_t id = 1; id <= 50; ++id) {
    Job j;
    j.id = JobId{id};
    j.partition = "batch";
    j.spec.script = id % 2 ? "#!/bin/sh\necho odd\n" : "#!/bin/sh\necho even\n";
    j.spec.env = std::vector<std::string>{"HOME=/home/u", "BIG=" + std::string(1000, 'x')};
    j.spec.argv = {"arg" + std::to_string(id)};
    hq::apply(s, JobSubmitted{j});
  }
  std::string bytes = encode_snapshot(s);
  CHECK(bytes.size() < 10000);  // 50 x 1 KB of environment, but stored once
  pb::StateSnapshot decoded;
  REQUIRE(decoded.ParseFromString(bytes));
  CHECK(decoded.scripts_size() == 2);
  CHECK(decoded.environments_size() == 1);
  ClusterState r = make_state(cfg);
  REQUIRE(restore_snapshot(bytes, r).is_ok());
  REQUIRE(r.jobs.size() == 50);
  const Job& seven = r.jobs.at(JobId{7});
  CHECK(*seven.spec.script == "#!/bin/sh\necho odd\n");
  CHECK(seven.spec.env->at(1).size() == 1004);
  CHECK(seven.spec.argv == std::vector<std::string>{"arg7"});
  CHECK(seven.spec.env.same_copy(r.jobs.at(JobId{8}).spec.env));
  // A snapshot written before references (scripts inline) still restores.
  pb::StateSnapshot old;
  *old.add_jobs() = to_pb(s.jobs.at(JobId{3}));
  ClusterState from_old = make_state(cfg);
  REQUIRE(restore_snapshot(old.SerializeAsString(), from_old).is_ok());
  CHECK(*from_old.jobs.at(JobId{3}).spec.script == "#!/bin/sh\necho odd\n");
  // A reference to an entry that is not there is refused, naming the job.
  old.mutable_jobs(0)->set_env_ref(5);
  auto bad = restore_snapshot(old.SerializeAsString(), from_old);
  CHECK(!bad.is_ok());
  CHECK(bad.message().find("snapshot job 3") != std::string::npos);
}

TEST_CASE("snapshots restore with their fields in any order and fields they do not know - a cut one is refused") {
  ClusterConfig cfg;
  PartitionConfig p;
  p.name = "batch";
  cfg.partitions.push_back(p);
  ClusterState s = make_state(cfg);
  for (uint64_t id = 1; id <= 3; ++id) {
    Job j;
    j.id = JobId{id};
    j.partition = "batch";
    j.spec.script = "#!/bin/sh\necho " + std::to_string(id % 2) + "\n";
    j.spec.env = std::vector<std::string>{"HOME=/home/u"};
    hq::apply(s, JobSubmitted{j});
  }
  hq::apply(s, NodeDrainChanged{"n9", 5, true, "disk", 1000});
  s.next_job_id = 12;
  std::string bytes = encode_snapshot(s);
  auto restores_as_s = [&](const std::string& encoded) {
    ClusterState r = make_state(cfg);
    REQUIRE(restore_snapshot(encoded, r).is_ok());
    CHECK(r.jobs.size() == 3);
    CHECK(*r.jobs.at(JobId{3}).spec.script == "#!/bin/sh\necho 1\n");
    CHECK(r.jobs.at(JobId{1}).spec.script.same_copy(r.jobs.at(JobId{3}).spec.script));
    CHECK(*r.jobs.at(JobId{2}).spec.env == std::vector<std::string>{"HOME=/home/u"});
    CHECK(r.drained.at("n9").reason == "disk");
    CHECK(r.drained.at("n9").time == 5);
    CHECK(r.drained.at("n9").uid == 1000);
    CHECK(r.next_job_id == 12);
  };
  restores_as_s(bytes);
  // The shared scripts and environments first (a concatenation is one message to protobuf).
  pb::StateSnapshot rest;
  REQUIRE(rest.ParseFromString(bytes));
  pb::StateSnapshot shared;
  shared.mutable_scripts()->Swap(rest.mutable_scripts());
  shared.mutable_environments()->Swap(rest.mutable_environments());
  restores_as_s(shared.SerializeAsString() + rest.SerializeAsString());
  // Fields of a later version: a varint, bytes, fixed32, fixed64, and next_job_id as bytes.
  std::string unknown = std::string("\x78\x96\x01") + "\x82\x01\x03" + "abc" + "\x8d\x01" + std::string(4, '\x01') +
                        "\x91\x01" + std::string(8, '\x02') + "\x0a\x01x";
  pb::StateSnapshot with_unknown;
  REQUIRE(with_unknown.ParseFromString(unknown + bytes + unknown));  // protobuf reads it too
  restores_as_s(unknown + bytes + unknown);
  // Cut short, a field numbered 0, a group that never ends: refused, as protobuf refuses them.
  for (const std::string& bad : {bytes.substr(0, bytes.size() - 1), bytes + std::string(1, '\0'),
                                 std::string("\x12\x05" "abc"), std::string("\x0b")}) {
    ClusterState r = make_state(cfg);
    CHECK(!pb::StateSnapshot().ParseFromString(bad));
    auto refused = restore_snapshot(bad, r);
    CHECK(!refused.is_ok());
    CHECK(refused.message() == "undecodable state snapshot");
  }
}

TEST_CASE("requeue events round-trip") {
  auto ev = decode_event(encode_event(JobRequeued{JobId{8}, 12, JobReason::kNone}));
  REQUIRE(ev.is_ok());
  CHECK(std::get<JobRequeued>(*ev).id.value == 8);
  CHECK(std::get<JobRequeued>(*ev).time == 12);
}

TEST_CASE("an operator's node features and weight: journaled, kept by re-registration, in snapshots") {
  ClusterConfig cfg = one_node({"old"});
  ClusterState s = make_state(cfg);
  NodeUpdated set{"n1", 5, std::vector<std::string>{"big", "fast"}, 7};
  auto decoded = decode_event(encode_event(Event{set}));
  REQUIRE(decoded.is_ok());
  CHECK(hq::apply(s, *decoded));
  CHECK(s.nodes.at("n1").features == std::vector<std::string>{"big", "fast"});
  CHECK(s.nodes.at("n1").weight == 7);
  CHECK(!hq::apply(s, *decoded));  // the same again changes nothing
  hq::apply(s, NodeUpdated{"n1", 6, std::nullopt, 2});  // weight alone: features stay
  CHECK(s.nodes.at("n1").features == std::vector<std::string>{"big", "fast"});
  CHECK(s.nodes.at("n1").weight == 2);
  // A dynamic node's agent reports its own features again: the operator's stay.
  hq::apply(s, NodeRegistered{"d1", 1, 2, 1024, {}, {"agent"}, "", "", 0, true, 1});
  hq::apply(s, NodeUpdated{"d1", 2, std::vector<std::string>{"mine"}, std::nullopt});
  hq::apply(s, NodeRegistered{"d1", 3, 2, 1024, {}, {"agent2"}, "", "", 0, true, 1});
  CHECK(s.nodes.at("d1").features == std::vector<std::string>{"mine"});
  ClusterState r = make_state(cfg);
  REQUIRE(restore_snapshot(encode_snapshot(s), r).is_ok());
  CHECK(r.nodes.at("n1").features == std::vector<std::string>{"big", "fast"});
  CHECK(r.nodes.at("n1").weight == 2);
  CHECK(r.nodes.at("d1").features == std::vector<std::string>{"mine"});
  pb::JournalEvent bad;
  bad.mutable_node_updated()->set_node("n1");
  bad.mutable_node_updated()->set_set_weight(true);
  bad.mutable_node_updated()->set_weight(-1);
  CHECK(!decode_event(bad.SerializeAsString()).is_ok());
}

namespace {
std::vector<size_t> long_frames_seen;
void note_long_frame(size_t bytes) { long_frames_seen.push_back(bytes); }
struct LongFrameHookFor {  // installs the hook for one test, whatever ends it
  explicit LongFrameHookFor(FrameDecoder::LongFrameHook hook) { FrameDecoder::on_long_frame(hook); }
  ~LongFrameHookFor() { FrameDecoder::on_long_frame(nullptr); }
};
}  // namespace

TEST_CASE("frames: a long frame's length goes to the long-frame hook once, before its buffer grows") {
  long_frames_seen.clear();
  LongFrameHookFor hooked(note_long_frame);
  std::string wire = encode_frame(std::string(300000, 'x')) + encode_frame("short");
  FrameDecoder d;
  std::vector<std::string> got = decode_in_reads(d, wire, 4096);
  REQUIRE(got.size() == 2);
  CHECK(got[0].size() == 300000);
  CHECK(got[1] == "short");
  CHECK(long_frames_seen == std::vector<size_t>{300000});
}

TEST_CASE("frames: a decoder that trusts lengths gives a long frame its buffer at the header, one that does not at 64 KiB") {
  long_frames_seen.clear();
  LongFrameHookFor hooked(note_long_frame);
  std::string payload(200000, 'x');
  for (size_t i = 0; i < payload.size(); i += 997) payload[i] = static_cast<char>('a' + i % 26);
  std::string wire = encode_frame("ack") + encode_frame(payload) + encode_frame("next");

  SUBCASE("trusted: the hook and the buffer come with the header") {
    FrameDecoder d(kMaxFrameBytes, FrameDecoder::Lengths::kTrusted);
    d.feed(wire.data(), 7 + 4 + 10);  // "ack", the long frame's header and 10 of its bytes
    auto ack = d.next();
    REQUIRE(ack.is_ok());
    REQUIRE(ack->has_value());
    CHECK(**ack == "ack");
    auto none = d.next();
    REQUIRE(none.is_ok());
    CHECK(!none->has_value());
    CHECK(long_frames_seen == std::vector<size_t>{payload.size()});
    CHECK(d.buffered() == 10);
    auto [space, room] = d.direct_space();
    REQUIRE(room == payload.size() - 10);
    std::copy_n(wire.data() + 7 + 4 + 10, room, space);
    d.filled(room);
    CHECK(d.direct_space().first == nullptr);  // all of it has come: nothing to read into (a read of 0 bytes is an end)
    auto whole = d.next();
    REQUIRE(whole.is_ok());
    REQUIRE(whole->has_value());
    CHECK(**whole == payload);
  }
  SUBCASE("not trusted: past 64 KiB the frame is collected, never read into in place") {
    FrameDecoder d;
    d.feed(wire.data(), 7 + 4 + 70000);
    REQUIRE(d.next().is_ok());
    REQUIRE(d.next().is_ok());
    CHECK(long_frames_seen == std::vector<size_t>{payload.size()});
    CHECK(d.direct_space().first == nullptr);
    CHECK(d.buffered() == 70000);
  }
  SUBCASE("not trusted: a header alone commits nothing") {
    FrameDecoder d;
    d.feed(wire.data(), 7 + 4 + 10);
    REQUIRE(d.next().is_ok());
    auto none = d.next();
    REQUIRE(none.is_ok());
    CHECK(!none->has_value());
    CHECK(long_frames_seen.empty());
    CHECK(d.direct_space().first == nullptr);
  }
  SUBCASE("every read size gives the same frames, fed or read in place") {
    for (auto lengths : {FrameDecoder::Lengths::kTrusted, FrameDecoder::Lengths::kWaitFor64KiB})
      for (size_t read : {size_t{1000}, size_t{4096}, size_t{65536}, size_t{70001}, wire.size()}) {
        CAPTURE(read);
        FrameDecoder fed(kMaxFrameBytes, lengths);
        auto got = decode_in_reads(fed, wire, read);
        REQUIRE(got.size() == 3);
        CHECK(got[1] == payload);
        CHECK(got[2] == "next");

        FrameDecoder direct(kMaxFrameBytes, lengths);  // as LocalLink reads: into the frame's buffer when it has one
        std::vector<std::string> frames;
        size_t at = 0;
        while (at < wire.size()) {
          auto [space, room] = direct.direct_space();
          size_t n = std::min({read, wire.size() - at, space ? room : read});
          if (space) {
            std::copy_n(wire.data() + at, n, space);
            direct.filled(n);
          } else {
            direct.feed(wire.data() + at, n);
          }
          at += n;
          for (auto f = direct.next(); f.is_ok() && f->has_value(); f = direct.next()) frames.push_back(**f);
        }
        REQUIRE(frames.size() == 3);
        CHECK(frames[0] == "ack");
        CHECK(frames[1] == payload);
        CHECK(frames[2] == "next");
        CHECK(direct.buffered() == 0);
      }
  }
}
