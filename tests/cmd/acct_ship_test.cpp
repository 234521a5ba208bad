// The controller's accounting shipper (cmd/controller/accounting): records wait kShipDelay
// to ship in batches, and a query ships what waits first, so sacct sees every change that
// was durable when it asked.
#include <doctest/doctest.h>

#include "../temp_dir.hpp"
#include "cmd/controller/accounting.hpp"
#include "cmd/post_queue.hpp"
#include "controller_harness.hpp"
#include "store/journal.hpp"

using namespace hq;

namespace {
Job ended_job(uint64_t id) {
  Job j;
  j.id = JobId{id};
  j.spec.uid = 1000;
  j.spec.user = "alice";
  j.spec.name = "short";
  j.partition = "debug";
  j.partitions = {j.partition};
  j.submit_time = j.eligible_time = 1'700'000'000;
  j.start_time = j.submit_time + 1;
  j.end_time = j.start_time + 1;
  j.state = JobState::kCompleted;
  return j;
}

// A journal in `dir`, loaded and started with `post`.
auto started_journal(const test::TempDir& dir, const std::function<void(std::function<void()>)>& post) {
  auto journal = store::Journal::open(dir.path() + "/state.db");
  REQUIRE(journal);
  REQUIRE((*journal)->load());
  (*journal)->start(post);
  return journal;
}
}  // namespace

TEST_CASE("accounting shipper: records wait for the delay, a query ships them first and sees them") {
  test::TempDir dir;
  cmd::PostQueue loop;
  auto post = [&loop](std::function<void()> fn) { loop.post(std::move(fn)); };
  auto journal = started_journal(dir, post);
  std::vector<std::function<void()>> delayed;  // what the shipper asked to run after its delay
  auto later = [&delayed](std::function<void()> fn) { delayed.push_back(std::move(fn)); };
  AccountingLink link(**journal, "t", post, later);
  REQUIRE(link.open(dir.path() + "/acct.db"));
  link.ship();  // as the controller does at start: learns what the store has
  REQUIRE(loop.run_until([&] { return link.idle(); }, 30));

  int durable = 0;
  for (uint64_t id : {1, 2, 3})
    (*journal)->append("job ended", {encode_acct_record(ended_job(id))}, [&](const Status& s) {
      durable += s ? 1 : 0;
      link.ship_soon();
    });
  REQUIRE(loop.run_until([&] { return durable == 3; }, 30));
  CHECK(delayed.size() == 1);  // one shipment for all three, not yet under way

  std::optional<Result<AccountingLink::Records>> got;
  store::AcctJobQuery q;
  q.cluster = "t";
  link.query(q, [&](Result<AccountingLink::Records> r) { got = std::move(r); });
  REQUIRE(loop.run_until([&] { return got.has_value(); }, 30));
  REQUIRE(*got);
  CHECK((*got)->jobs.size() == 3);

  for (auto& fn : delayed) fn();  // the delay's end: nothing left to ship, nothing lost
  bool again = false;
  link.query(q, [&](Result<AccountingLink::Records> r) { again = r && r->jobs.size() == 3; });
  CHECK(loop.run_until([&] { return again; }, 30));
  link.stop();
  (*journal)->stop();
}

TEST_CASE("accounting shipper: a query waits for an outbox read that began after it, not the one under way") {
  test::TempDir dir;
  auto disk = std::make_shared<test::MemoryLog::Disk>();
  test::MemoryLog journal(disk);  // one thread: what it does runs in the order it was asked
  cmd::PostQueue loop;
  auto post = [&loop](std::function<void()> fn) { loop.post(std::move(fn)); };
  std::vector<std::function<void()>> delayed;
  auto later = [&delayed](std::function<void()> fn) { delayed.push_back(std::move(fn)); };
  journal.start(post);
  AccountingLink link(journal, "t", post, later);
  REQUIRE(link.open(dir.path() + "/acct.db"));
  link.ship();
  REQUIRE(loop.run_until([&] { return link.idle(); }, 30));

  int durable = 0;
  auto end_job = [&](uint64_t id) {
    journal.append("job ended", {encode_acct_record(ended_job(id))}, [&](const Status&) { ++durable; });
    link.ship_soon();
  };
  end_job(1);
  REQUIRE(loop.run_until([&] { return durable == 1; }, 30));
  for (auto& fn : std::exchange(delayed, {})) fn();  // job 1's shipment begins: its outbox read is asked for
  end_job(2);                                         // job 2 ends after that
  std::optional<size_t> seen;
  store::AcctJobQuery q;
  q.cluster = "t";
  link.query(q, [&](Result<AccountingLink::Records> r) { seen = r ? r->jobs.size() : 0; });
  REQUIRE(loop.run_until([&] { return seen.has_value(); }, 30));
  CHECK(*seen == 2);  // the read under way had only job 1: the answer waited for the next
  link.stop();
}

TEST_CASE("accounting shipper: a node's span out of service reaches the store, opened then closed in place") {
  test::TempDir dir;
  cmd::PostQueue loop;
  auto post = [&loop](std::function<void()> fn) { loop.post(std::move(fn)); };
  auto journal = started_journal(dir, post);
  auto later = [](std::function<void()> fn) { fn(); };
  AccountingLink link(**journal, "t", post, later);
  REQUIRE(link.open(dir.path() + "/acct.db"));
  NodeSpan span{"n1", "DRAIN", "maintenance", 1000, 1'700'000'000, 0, 8, 4096, 1};
  int durable = 0;
  auto count = [&](const Status& s) { durable += s ? 1 : 0; };
  (*journal)->append("node drained", {encode_node_span(span)}, store::OutboxKind::kNode, count);
  span.end = 1'700'000'600;
  (*journal)->append("node resumed", {encode_node_span(span)}, store::OutboxKind::kNode, count);
  REQUIRE(loop.run_until([&] { return durable == 2; }, 30));
  link.ship();
  REQUIRE(loop.run_until([&] { return link.idle(); }, 30));
  link.stop();
  (*journal)->stop();

  auto db = store::open_acct_store(dir.path() + "/acct.db");
  REQUIRE(db);
  store::AcctJobQuery q;
  q.cluster = "t";
  auto all = (*db)->node_spans(q);
  REQUIRE(all);
  REQUIRE(all->size() == 1);  // the same span, its end filled in
  pb::NodeSpanRecord got;
  REQUIRE(got.ParseFromString(all->front()));
  CHECK(got.node() == "n1");
  CHECK(got.state() == "DRAIN");
  CHECK(got.reason() == "maintenance");
  CHECK(got.end() == 1'700'000'600);
  q.start = 1'700'000'600;  // a window after it ended: not there
  CHECK((*db)->node_spans(q)->empty());
  q.start = 1'699'999'000, q.end = 1'700'000'001;  // a window it overlaps by a second
  CHECK((*db)->node_spans(q)->size() == 1);
}
