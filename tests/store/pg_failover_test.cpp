// The PostgreSQL accounting store across a failover, as a large site runs it: a primary with
// a synchronous streaming standby (both private servers on 127.0.0.1, tests/pg_server.hpp),
// and a multi-host libpq URI with target_session_attrs=read-write. The store finds the
// writable server wherever it is in the list; when the primary dies and the standby is
// promoted, the store's next call fails (the caller retries, as the controller's shipping
// does) and the one after reaches the new primary, with every record acknowledged before.
#include <doctest/doctest.h>

#include "../pg_server.hpp"
#include "../skip.hpp"
#include "../wait_until.hpp"
#include "store/acct_store.hpp"

using namespace hq;
using hq::store::AcctJob;

namespace {

AcctJob record(int64_t seq) {
  AcctJob j;
  j.seq = seq;
  j.cluster = "c1";
  j.job_id = static_cast<uint64_t>(seq);
  j.submit_time = 100;
  j.uid = 1000;
  j.name = "job" + std::to_string(seq);
  j.state = "COMPLETED";
  j.partition = "debug";
  j.start_time = 110;
  j.end_time = 120;
  j.record = "record-" + std::to_string(seq);
  return j;
}

// Applies `jobs`, again on an unavailable answer (a connection lost mid-failover), for up to
// `seconds`; the last answer. `failed`: how many were unavailable before it.
Result<int64_t> apply_retrying(store::AcctStore& db, const std::vector<AcctJob>& jobs, int seconds, int& failed) {
  Result<int64_t> r = unavailable("not tried");
  failed = -1;
  test::wait_until([&] {
    r = db.apply("src", jobs);
    ++failed;
    return r.is_ok() || r.status().code() != Code::kUnavailable;
  }, seconds);
  return r;
}

}  // namespace

TEST_CASE("postgresql store: a multi-host URI finds the primary, and after a failover the promoted standby") {
  // Commits wait until the standby has applied them: what the store acknowledged is on
  // both servers, and the standby has the database before the store connects (a host
  // that refuses the database would end libpq's walk down the list).
  test::PgServer primary("-c synchronous_standby_names='*' -c synchronous_commit=remote_apply");
  if (!primary.why_not().empty()) HQ_SKIP(primary.why_not());
  test::PgServer standby("", &primary);
  if (!standby.why_not().empty()) HQ_SKIP(standby.why_not());
  primary.uri("failover");  // the database, made on the primary (and so on the standby)
  // The standby first: read-only, it is passed over for the primary.
  std::string uri = "postgresql://hq@127.0.0.1:" + std::to_string(standby.port()) + ",127.0.0.1:" +
                    std::to_string(primary.port()) + "/failover?target_session_attrs=read-write";
  auto opened = store::open_acct_store(uri);
  REQUIRE_MESSAGE(opened.is_ok(), opened.status().message());
  auto db = std::move(opened).value();
  CHECK(db->where() == "postgresql://127.0.0.1:" + std::to_string(standby.port()) + ",127.0.0.1:" +
                           std::to_string(primary.port()) + "/failover");  // no user, each host with its port
  auto first = db->apply("src", {record(1), record(2), record(3)});
  REQUIRE_MESSAGE(first.is_ok(), first.status().message());
  CHECK(*first == 3);

  primary.crash();
  REQUIRE(standby.promote());
  int failed = 0;
  auto after = apply_retrying(*db, {record(4), record(5)}, 60, failed);
  REQUIRE_MESSAGE(after.is_ok(), after.status().message());
  CHECK(failed >= 1);  // the connection to the dead primary failed first
  CHECK(*after == 5);
  CHECK(db->shipped("src").value() == 5);
  CHECK(db->count().value() == 5);  // the three from before the failover are there too
  store::AcctJobQuery q;
  q.cluster = "c1";
  auto rows = db->query(q);
  REQUIRE(rows.is_ok());
  CHECK(rows->size() == 5);
  CHECK(rows->front() == "record-1");
}
