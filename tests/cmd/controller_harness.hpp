// Drives the real Controller without sockets or SQLite: an in-memory event log behind the
// store::EventLog seam, recording peers behind the net::Peer seam, and an io_context the
// test polls. One thread.
#pragma once
#include <asio/io_context.hpp>
#include <asio/post.hpp>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cmd/controller/controller.hpp"
#include "core/hostlist.hpp"
#include "net/peer.hpp"
#include "store/event_log.hpp"

namespace hq::test {

// Keeps every event; completions go through the post function, as the SQLite journal's do.
// `crash()` keeps what was committed, like a kill -9: events not yet committed are lost.
class MemoryLog : public store::EventLog {
 public:
  struct Disk {
    std::string snapshot;
    std::vector<std::string> events;
    std::vector<store::OutboxRow> outbox;
    int64_t outbox_seq = 0;
  };
  explicit MemoryLog(std::shared_ptr<Disk> disk) : disk_(std::move(disk)) {}
  Result<store::LoadedJournal> load() override {
    store::LoadedJournal out;
    out.snapshot = disk_->snapshot;
    out.events = disk_->events;
    return out;
  }
  void start(Post post) override { post_ = std::move(post); }
  using store::EventLog::append;
  void append(std::string event, std::vector<std::string> records, store::OutboxKind kind, Done done) override {
    post_([disk = disk_, event = std::move(event), records = std::move(records), kind, done = std::move(done)] {
      disk->events.push_back(event);
      for (auto& r : records) disk->outbox.push_back({++disk->outbox_seq, r, kind});
      if (done) done(Status::ok());
    });
  }
  using store::EventLog::append_outbox;
  void append_outbox(store::OutboxKind kind, std::string record, Done done) override {
    post_([disk = disk_, kind, record = std::move(record), done = std::move(done)] {
      disk->outbox.push_back({++disk->outbox_seq, record, kind});
      if (done) done(Status::ok());
    });
  }
  void read_outbox(int64_t after, size_t limit, OutboxDone done) override {
    post_([disk = disk_, after, limit, done = std::move(done)] {
      std::vector<store::OutboxRow> rows;
      for (const auto& r : disk->outbox)
        if (r.seq > after && rows.size() < limit) rows.push_back(r);
      done(std::move(rows));
    });
  }
  void ack_outbox(int64_t seq) override {
    post_([disk = disk_, seq] { std::erase_if(disk->outbox, [&](const store::OutboxRow& r) { return r.seq <= seq; }); });
  }
  std::string source_id() const override { return "memory"; }
  void snapshot(std::string state, Done done) override {
    post_([disk = disk_, state = std::move(state), done = std::move(done)] {
      disk->snapshot = state;
      disk->events.clear();
      if (done) done(Status::ok());
    });
  }
  void stop() override {}

 private:
  std::shared_ptr<Disk> disk_;
  Post post_;
};

// Records what the controller sends.
class RecordingPeer : public net::Peer {
 public:
  // `name`: the connection's peer address as a TCP stream gives it ("ip:port").
  explicit RecordingPeer(std::string name = "fake-peer") : name_(std::move(name)) {}
  void send(const pb::Envelope& msg) override {
    if (open_) sent.push_back(msg);
  }
  void close(const std::string& reason) override {
    if (!open_) return;
    open_ = false;
    reason_ = reason;
  }
  bool is_open() const override { return open_; }
  const std::string& peer() const override { return name_; }
  const std::string& close_reason() const override { return reason_; }
  // Takes what was sent so far.
  std::vector<pb::Envelope> take() {
    std::vector<pb::Envelope> out;
    out.swap(sent);
    return out;
  }
  std::vector<pb::Envelope> sent;

 private:
  bool open_ = true;
  std::string name_, reason_;
};

// A controller over `nodes` (hostlist) with `cpus` each, on a fresh in-memory disk or an
// existing one (a restart). With `at`, its clock stands at that time until a test moves
// `clock` (then `ctl->tick()` runs the periodic checks at once); else it reads the real one.
// `configure` may change the config first.
struct ControllerHarness {
  explicit ControllerHarness(const std::string& nodes, int cpus = 4,
                             std::shared_ptr<MemoryLog::Disk> disk = std::make_shared<MemoryLog::Disk>(),
                             std::optional<Time> at = std::nullopt,
                             const std::function<void(ClusterConfig&)>& configure = {}, const std::string& secret = "/nonexistent")
      : disk(std::move(disk)), clock(at) {
    ClusterConfig config = uniform_cluster_config(*expand_hostlist(nodes), cpus, 4096, "batch");
    config.allow_root_jobs = true;
    if (configure) configure(config);
    cmd::Controller::Clock now;
    if (clock) now = [this] { return *clock; };
    ctl = std::make_unique<cmd::Controller>(io, config, std::make_unique<MemoryLog>(this->disk), secret, std::move(now));
    Status s = ctl->recover();
    ok = s.is_ok();
    ctl->start();
    settle();
  }
  ~ControllerHarness() {
    if (!crashed) ctl->shutdown();
  }
  // Runs everything that is ready (completions, scheduling passes due now or within ms).
  void settle() {
    for (int idle = 0; idle < 2;) {
      io.restart();
      size_t n = io.poll();
      if (n == 0) {
        io.restart();
        n = io.run_for(std::chrono::milliseconds(2));
      }
      idle = n == 0 ? idle + 1 : 0;
    }
    io.restart();
  }
  // A one-task job (with --array `array` when given), idempotency key `key`.
  static pb::SubmitRequest job_request(const std::string& key = "", const std::string& array = "") {
    pb::SubmitRequest req;
    req.mutable_spec()->set_script("#!/bin/sh\ntrue\n");
    req.mutable_spec()->set_ntasks(1);
    req.mutable_spec()->set_cpus_per_task(1);
    req.mutable_spec()->set_nodes_min(1);
    req.mutable_spec()->set_array(array);
    req.set_request_key(key);
    return req;
  }
  static net::Identity user(uint32_t uid = 1000) {
    net::Identity who;
    who.uid = who.gid = uid;
    return who;
  }
  // Sends `req` as `who` and waits for the answer.
  Result<pb::SubmitReply> submit_request(const pb::SubmitRequest& req, const net::Identity& who = user()) {
    Result<pb::SubmitReply> out = internal("no answer");
    ctl->submit(req, who, [&](Result<pb::SubmitReply> r) { out = std::move(r); });
    settle();
    return out;
  }
  Result<pb::CancelReply> cancel(std::vector<uint64_t> ids, const std::string& key, const net::Identity& who = user()) {
    pb::CancelRequest req;
    for (uint64_t id : ids) req.add_job_ids(id);
    req.set_request_key(key);
    Result<pb::CancelReply> out = internal("no answer");
    ctl->cancel(req, who, [&](Result<pb::CancelReply> r) { out = std::move(r); });
    settle();
    return out;
  }
  // Submits a one-task job; its id, or 0 with `error` set.
  uint64_t submit() {
    auto r = submit_request(job_request());
    if (!r) error = r.status().message();
    return r ? r->job_id() : 0;
  }
  std::string state_of(uint64_t id) {
    pb::QueueRequest q;
    q.add_job_ids(id);
    q.set_include_finished(true);
    net::Identity root;
    auto reply = ctl->queue(q, root);
    return reply.jobs_size() ? reply.jobs(0).state() : "";
  }
  // `hq control ACTION NODES` as root; the reply's errors, joined ("" when none).
  std::string node_control(const std::string& action, const std::string& nodes, const std::string& reason = "") {
    pb::NodeControlRequest req;
    req.set_action(action);
    req.set_nodes(nodes);
    req.set_reason(reason);
    std::string errors = "no answer";
    ctl->node_control(req, net::Identity{}, [&](pb::NodeControlReply r) {
      errors.clear();
      for (const auto& e : r.errors()) errors += e + ";";
    });
    settle();
    return errors;
  }
  pb::Node node(const std::string& name) {
    pb::NodesReply all = ctl->nodes();
    for (const auto& n : all.nodes())
      if (n.name() == name) return n;
    return {};
  }

  asio::io_context io;
  std::shared_ptr<MemoryLog::Disk> disk;
  std::optional<Time> clock;  // the controller's time, when the test keeps it
  std::unique_ptr<cmd::Controller> ctl;
  bool ok = false;
  std::string error;     // the last refused submission's
  bool crashed = false;  // set before destroying: no shutdown snapshot (a kill -9)
};

inline pb::RegisterNode registration(const std::string& name, int cpus = 4) {
  pb::RegisterNode r;
  r.set_name(name);
  r.set_cpus(cpus);
  r.set_mem_mib(4096);
  return r;
}

// An agent per node of `nodes`, registered (jobs may start there), and what follows run;
// only the agents the controller took are returned.
inline std::vector<std::shared_ptr<RecordingPeer>> register_agents(ControllerHarness& h,
                                                                  std::initializer_list<const char*> nodes) {
  std::vector<std::shared_ptr<RecordingPeer>> agents;
  for (const char* node : nodes) {
    auto agent = std::make_shared<RecordingPeer>();
    if (h.ctl->agent_register(agent, 1, registration(node))) agents.push_back(agent);
  }
  h.settle();
  return agents;
}

}  // namespace hq::test
