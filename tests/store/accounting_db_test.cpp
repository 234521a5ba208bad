// The accounting store, on each of its databases (SQLite, and PostgreSQL on a private server,
// tests/pg_server.hpp): records applied once per source seq, sacct's selections (job ids
// and array tasks, users, names, states in a window), steps, the model's rows; and what
// is SQLite's alone (its schema's migration, its WAL synced at each commit).
#include <doctest/doctest.h>

#include <algorithm>

#include "../pg_server.hpp"
#include "../raw_sql.hpp"
#include "../skip.hpp"
#include "../sync_counting_vfs.hpp"
#include "../temp_dir.hpp"
#include "store/accounting_db.hpp"
#include "store/acct_store.hpp"
#include "store/journal.hpp"

using namespace hq;
using hq::store::AccountingDb;
using hq::store::AcctJob;

namespace {

std::unique_ptr<AccountingDb> open_db(const std::string& dir) {
  auto db = AccountingDb::open(dir + "/accounting.db");
  REQUIRE_MESSAGE(db.is_ok(), db.status().message());
  return std::move(db).value();
}

// The two databases, as TEST_CASE_TEMPLATE's types: where a test's store is ("" and why
// not, when it cannot be had here).
struct Sqlite {
  static std::string path(const std::string& dir, std::string&) { return dir + "/accounting.db"; }
};
struct Postgres {
  static std::string path(const std::string& dir, std::string& why_not) {
    auto& server = test::PgServer::instance();
    why_not = server.why_not();
    return why_not.empty() ? server.uri("t" + std::filesystem::path(dir).filename().string()) : "";
  }
};

std::unique_ptr<store::AcctStore> open_store(const std::string& path) {
  auto db = store::open_acct_store(path);
  REQUIRE_MESSAGE(db.is_ok(), db.status().message());
  return std::move(db).value();
}

}  // namespace

TYPE_TO_STRING(Sqlite);
TYPE_TO_STRING(Postgres);

// In a TEST_CASE_TEMPLATE over the databases: `db` opened on the test's store, `path` where
// it is (to open it again), or the test skipped with why.
#define OPEN_STORE_OR_SKIP(dir)                          \
  std::string why_not;                                   \
  std::string path = TestType::path(dir.path(), why_not); \
  if (path.empty()) HQ_SKIP(why_not);                    \
  auto db = open_store(path)

namespace {

AcctJob job(int64_t seq, uint64_t id, const std::string& state, Time eligible, Time start, Time end, uint32_t uid = 1000) {
  AcctJob j;
  j.seq = seq;
  j.cluster = "c1";
  j.job_id = id;
  j.submit_time = 100;
  j.uid = uid;
  j.name = "job" + std::to_string(id);
  j.state = state;
  j.partition = "debug";
  j.eligible_time = eligible;
  j.start_time = start;
  j.end_time = end;
  j.record = "record-" + std::to_string(id) + "-" + state;
  return j;
}

std::vector<std::string> query(store::AcctStore& db, store::AcctJobQuery q) {
  q.cluster = "c1";
  auto rows = db.query(q);
  REQUIRE_MESSAGE(rows.is_ok(), rows.status().message());
  return *rows;
}

}  // namespace

TEST_CASE_TEMPLATE("accounting store: a job's latest record wins and a seq applies once", TestType, Sqlite, Postgres) {
  test::TempDir dir;
  OPEN_STORE_OR_SKIP(dir);
  REQUIRE(db->apply("src", {job(1, 7, "PENDING", 100, 0, 0), job(2, 7, "RUNNING", 100, 110, 0)}).value() == 2);
  // Shipped again after a restart (1, 2) with one new (3): only 3 changes anything.
  auto last = db->apply("src", {job(1, 7, "PENDING", 100, 0, 0), job(2, 7, "RUNNING", 100, 110, 0),
                                job(3, 7, "COMPLETED", 100, 110, 120)});
  REQUIRE(last.is_ok());
  CHECK(*last == 3);
  CHECK(db->apply("src", {job(2, 7, "RUNNING", 100, 110, 0)}).value() == 3);  // an old one: skipped
  CHECK(query(*db, {}) == std::vector<std::string>{"record-7-COMPLETED"});
  CHECK(db->count().value() == 1);
  // Another source (a controller whose state was wiped) starts from seq 0.
  CHECK(db->shipped("other").value() == 0);
  CHECK(db->apply("other", {job(1, 8, "PENDING", 100, 0, 0)}).value() == 1);
  CHECK(db->count().value() == 2);
}

TEST_CASE_TEMPLATE("accounting store: what was applied survives a reopen", TestType, Sqlite, Postgres) {
  test::TempDir dir;
  {
    OPEN_STORE_OR_SKIP(dir);
    db->apply("src", {job(5, 1, "COMPLETED", 100, 110, 120)}).value();
  }
  std::string ignored;
  auto db = open_store(TestType::path(dir.path(), ignored));
  CHECK(db->shipped("src").value() == 5);
  CHECK(query(*db, {}).size() == 1);
}

TEST_CASE_TEMPLATE("accounting store: sacct's selections", TestType, Sqlite, Postgres) {
  test::TempDir dir;
  OPEN_STORE_OR_SKIP(dir);
  AcctJob task = job(4, 21, "COMPLETED", 100, 110, 200);
  task.array_job_id = 20;
  task.array_task_id = 3;
  REQUIRE(db->apply("src", {job(1, 10, "COMPLETED", 100, 110, 200), job(2, 11, "FAILED", 100, 300, 400, 2000),
                            job(3, 12, "PENDING", 0, 0, 0), task, job(5, 13, "RUNNING", 100, 150, 0)})
              .is_ok());
  auto ids = [&](store::AcctJobQuery q) {
    std::vector<std::string> out;
    for (const auto& r : query(*db, q)) out.push_back(r.substr(7, 2));
    return out;
  };
  store::AcctJobQuery q;
  q.jobs = {{20, -1}};  // an array's id: its tasks
  CHECK(ids(q) == std::vector<std::string>{"21"});
  q.jobs = {{20, 3}, {12, -1}};  // a task, and a held job (no window with -j)
  CHECK(ids(q) == std::vector<std::string>{"12", "21"});
  q = {};
  q.uids = {2000};
  CHECK(ids(q) == std::vector<std::string>{"11"});
  q = {};
  q.names = {"job13"};
  CHECK(ids(q) == std::vector<std::string>{"13"});
  q = {};
  q.start = 250;  // not ended before 250; a held job (never eligible) is in no window
  CHECK(ids(q) == std::vector<std::string>{"11", "13"});
  q.end = 120;  // and eligible by 120
  CHECK(ids(q) == std::vector<std::string>{"11", "13"});
  q.end = 99;
  CHECK(ids(q).empty());
  q = {};
  q.states = {"FAILED"};
  q.start = 350;
  q.end = 450;  // ended in the window
  CHECK(ids(q) == std::vector<std::string>{"11"});
  q.start = 401;
  CHECK(ids(q).empty());
  q = {};
  q.states = {"RUNNING"};
  q.start = 160;
  q.end = 170;  // ran during the window (still running)
  CHECK(ids(q) == std::vector<std::string>{"13"});
  q = {};
  q.states = {"PENDING"};
  CHECK(ids(q) == std::vector<std::string>{"12"});  // no window: the state alone
  q = {};
  q.limit = 2;
  CHECK(ids(q).size() == 2);
}

TEST_CASE_TEMPLATE("accounting store: sacct -j with thousands of ids and tasks, and only this cluster's jobs", TestType, Sqlite, Postgres) {
  test::TempDir dir;
  OPEN_STORE_OR_SKIP(dir);
  std::vector<AcctJob> jobs;
  for (uint64_t id = 1; id <= 3000; ++id) jobs.push_back(job(static_cast<int64_t>(id), id, "COMPLETED", 100, 110, 200));
  AcctJob task = job(3001, 5001, "COMPLETED", 100, 110, 200);
  task.array_job_id = 5000, task.array_task_id = 7;
  jobs.push_back(task);
  AcctJob elsewhere = job(3002, 2, "COMPLETED", 100, 110, 200);  // the same id on another cluster
  elsewhere.cluster = "c2", elsewhere.record = "record-other-cluster";
  jobs.push_back(elsewhere);
  REQUIRE(db->apply("src", jobs).is_ok());
  store::AcctJobQuery q;
  for (uint64_t id = 2; id <= 3000; id += 2) q.jobs.emplace_back(id, -1);      // 1,500 ids (an OR chain of
  for (int32_t t = 0; t < 1500; ++t) q.jobs.emplace_back(5000, t);              // them was too deep for SQLite)
  auto rows = query(*db, q);
  REQUIRE(rows.size() == 1501);
  CHECK(rows.front() == "record-2-COMPLETED");
  CHECK(rows.back() == "record-5001-COMPLETED");
  CHECK(std::find(rows.begin(), rows.end(), "record-other-cluster") == rows.end());
  q.jobs = {{2, -1}};
  q.uids = {1001};  // -j and -u together: both apply
  CHECK(query(*db, q).empty());
}

TEST_CASE("accounting store: a version-1 file is read and gets version 2's indexes") {
  test::TempDir dir;
  std::string path = dir.path() + "/accounting.db";
  test::raw_sql(path,
                "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
                "INSERT INTO meta VALUES('schema_version','1');"
                "CREATE TABLE jobs(cluster TEXT NOT NULL, job_id INTEGER NOT NULL, submit_time INTEGER NOT NULL, "
                "uid INTEGER NOT NULL, name BLOB NOT NULL, state TEXT NOT NULL, partition TEXT NOT NULL, account BLOB NOT NULL, "
                "eligible_time INTEGER NOT NULL, start_time INTEGER NOT NULL, end_time INTEGER NOT NULL, "
                "array_job_id INTEGER NOT NULL, array_task_id INTEGER NOT NULL, record BLOB NOT NULL, "
                "PRIMARY KEY(cluster, job_id, submit_time));"
                "CREATE INDEX jobs_user ON jobs(uid, end_time);"
                "INSERT INTO jobs VALUES('c1', 9, 100, 1000, 'old', 'COMPLETED', 'debug', '', 100, 110, 120, 0, -1, 'record-9');");
  {
    auto db = open_db(dir.path());
    store::AcctJobQuery q;
    q.uids = {1000};
    q.start = 115;
    CHECK(query(*db, q) == std::vector<std::string>{"record-9"});
  }
  CHECK(test::raw_scalar(path, "SELECT value FROM meta WHERE key = 'schema_version'") == "2");
  CHECK(test::raw_scalar(path, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'jobs_user'") == "0");
  CHECK(test::raw_scalar(path, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'jobs_by_user'") == "1");
  // sacct -u USER -S ... is served by the (cluster, uid, end) index, not a scan.
  CHECK(test::raw_scalar(path, "EXPLAIN QUERY PLAN SELECT record FROM jobs WHERE cluster = 'c1' AND uid IN (1000) AND "
                               "(eligible_time > 0 AND (CASE WHEN end_time = 0 THEN 9223372036854775807 ELSE end_time "
                               "END) >= 5) ORDER BY job_id, array_task_id", 3)
            .find("jobs_by_user") != std::string::npos);
  // A file of a later version is refused, unchanged.
  test::raw_sql(path, "UPDATE meta SET value = '3' WHERE key = 'schema_version'");
  auto later = AccountingDb::open(path);
  REQUIRE_FALSE(later.is_ok());
  CHECK(later.status().message().find("schema version '3'") != std::string::npos);
}

TEST_CASE("journal: accounting records wait in the outbox until acknowledged, across a reopen") {
  test::TempDir dir;
  std::string source;
  {
    auto j = store::Journal::open(dir.path() + "/state.db");
    REQUIRE(j.is_ok());
    REQUIRE((*j)->load().is_ok());
    source = (*j)->source_id();
    CHECK(source.size() == 16);
    (*j)->start([](std::function<void()> fn) { fn(); });
    (*j)->append("e1", {"r1", "r2"}, {});
    (*j)->append("e2", {"r3"}, {});
    std::vector<store::OutboxRow> rows;
    (*j)->read_outbox(0, 10, [&](Result<std::vector<store::OutboxRow>> r) { rows = r.value(); });
    (*j)->ack_outbox(1);
    (*j)->stop();
    REQUIRE(rows.size() == 3);
    CHECK(rows[0].body == "r1");
    CHECK(rows[2].seq > rows[1].seq);
  }
  auto j = store::Journal::open(dir.path() + "/state.db");
  REQUIRE(j.is_ok());
  REQUIRE((*j)->load().is_ok());
  CHECK((*j)->source_id() == source);  // the same journal, the same source for the store
  (*j)->start([](std::function<void()> fn) { fn(); });
  std::vector<store::OutboxRow> rows;
  (*j)->read_outbox(0, 10, [&](Result<std::vector<store::OutboxRow>> r) { rows = r.value(); });
  (*j)->stop();
  REQUIRE(rows.size() == 2);  // r1 was acknowledged
  CHECK(rows[0].body == "r2");
  CHECK(rows[1].body == "r3");
}

TEST_CASE_TEMPLATE("accounting store: the model's rows are written where they changed and read back after a reopen",
                   TestType, Sqlite, Postgres) {
  test::TempDir dir;
  AccountingDb::ModelRows first = {{{"account", "root"}, std::string("\x0a\x04root\0x", 8)},
                                   {{"user", "root"}, "u-root"},
                                   {{"qos", "normal"}, "q-normal"}};
  std::string store_path;
  {
    OPEN_STORE_OR_SKIP(dir);
    store_path = path;
    REQUIRE(db->save_model({}, first).is_ok());
    AccountingDb::ModelRows second = first;
    second[{"user", "root"}] = "u-root-2";
    second.erase({"qos", "normal"});
    second[{"account", "physics"}] = "a-physics";
    REQUIRE(db->save_model(first, second).is_ok());
    first = second;
  }
  auto db = open_store(store_path);
  auto rows = db->load_model();
  REQUIRE(rows.is_ok());
  CHECK(*rows == first);  // binary bodies intact, the changed one replaced, the gone one deleted
}

TEST_CASE_TEMPLATE("accounting store: saving only model_change's two parts stores what saving the wholes does", TestType,
                   Sqlite, Postgres) {
  test::TempDir dir;
  AccountingDb::ModelRows before = {{{"user", "root"}, "u1"}, {{"qos", "normal"}, "q"}, {{"account", "root"}, "a"}};
  AccountingDb::ModelRows next = {{{"user", "root"}, "u2"}, {{"account", "root"}, "a"}, {{"account", "bio"}, "b"}};
  auto [gone_or_changed, new_or_changed] = hq::store::model_change(before, next);
  CHECK(gone_or_changed == AccountingDb::ModelRows{{{"user", "root"}, "u1"}, {{"qos", "normal"}, "q"}});
  CHECK(new_or_changed == AccountingDb::ModelRows{{{"user", "root"}, "u2"}, {{"account", "bio"}, "b"}});
  OPEN_STORE_OR_SKIP(dir);
  REQUIRE(db->save_model({}, before).is_ok());
  REQUIRE(db->save_model(gone_or_changed, new_or_changed).is_ok());
  auto rows = db->load_model();
  REQUIRE(rows.is_ok());
  CHECK(*rows == next);  // the unchanged row kept, the changed one replaced, the gone one deleted
}

TEST_CASE_TEMPLATE("accounting store: step records belong to their job's record and come back with it, once", TestType, Sqlite, Postgres) {
  test::TempDir dir;
  OPEN_STORE_OR_SKIP(dir);
  auto step = [](int64_t seq, uint64_t id, Time submit, int64_t step_id, const std::string& body) {
    AcctJob s;
    s.seq = seq;
    s.cluster = "c1";
    s.job_id = id;
    s.submit_time = submit;
    s.step_id = step_id;
    s.record = body;
    return s;
  };
  AcctJob again = job(5, 7, "COMPLETED", 100, 110, 120);
  again.submit_time = 500;  // job id 7 used again after a wiped state: another job
  again.record = "record-7-again";
  REQUIRE(db->apply("src", {job(1, 7, "COMPLETED", 100, 110, 120), step(2, 7, 100, 1, "7.1"), step(3, 7, 100, 0, "7.0-old"),
                            step(4, 7, 100, 0, "7.0"), again, step(6, 7, 500, 0, "7.0-again"), step(7, 8, 100, 0, "8.0")})
              .is_ok());
  CHECK(db->apply("src", {step(3, 7, 100, 0, "shipped-again")}).value() == 7);  // an old seq: skipped
  store::AcctJobQuery q;
  q.cluster = "c1";
  q.jobs = {{7, -1}};
  std::vector<std::string> steps;
  auto jobs = db->query(q, &steps);
  REQUIRE(jobs.is_ok());
  CHECK(*jobs == std::vector<std::string>{"record-7-COMPLETED", "record-7-again"});
  CHECK(steps == std::vector<std::string>{"7.0", "7.1", "7.0-again"});  // by job, then step id; 8's not
  CHECK(query(*db, q).size() == 2);  // without `steps`: jobs only
  CHECK(db->count().value() == 2);   // steps are not jobs
}

TEST_CASE("journal: step records wait in the outbox with their kind, and an outbox made before kinds reads as jobs") {
  test::TempDir dir;
  std::string path = dir.path() + "/state.db";
  {
    auto j = store::Journal::open(path);
    REQUIRE(j.is_ok());
    REQUIRE((*j)->load().is_ok());
    (*j)->stop();
  }
  // As an hq before step records left it: no kind column, one job record waiting.
  test::raw_sql(path, "DROP TABLE acct_outbox");
  test::raw_sql(path, "CREATE TABLE acct_outbox(seq INTEGER PRIMARY KEY AUTOINCREMENT, body BLOB NOT NULL)");
  test::raw_sql(path, "INSERT INTO acct_outbox(body) VALUES('old-job')");
  auto j = store::Journal::open(path);
  REQUIRE_MESSAGE(j.is_ok(), j.status().message());
  REQUIRE((*j)->load().is_ok());
  (*j)->start([](std::function<void()> fn) { fn(); });
  (*j)->append("e1", {"job"}, {});
  (*j)->append_outbox(store::OutboxKind::kStep, "step");
  std::vector<store::OutboxRow> rows;
  (*j)->read_outbox(0, 10, [&](Result<std::vector<store::OutboxRow>> r) { rows = r.value(); });
  (*j)->stop();
  REQUIRE(rows.size() == 3);
  CHECK((rows[0].body == "old-job" && rows[0].kind == store::OutboxKind::kJob));
  CHECK((rows[1].body == "job" && rows[1].kind == store::OutboxKind::kJob));
  CHECK((rows[2].body == "step" && rows[2].kind == store::OutboxKind::kStep));
}

TEST_CASE_TEMPLATE("accounting store: a requeued job's runs are rows of their own, the latest alone unless all are asked for", TestType, Sqlite, Postgres) {
  test::TempDir dir;
  OPEN_STORE_OR_SKIP(dir);
  AcctJob first = job(1, 7, "REQUEUED", 100, 110, 120);
  AcctJob second = job(2, 7, "COMPLETED", 121, 130, 140);
  second.submit_time = 121;  // submitted again at the requeue
  AcctJob other = job(3, 8, "COMPLETED", 100, 110, 120);
  REQUIRE(db->apply("src", {first, second, other}).is_ok());
  store::AcctJobQuery q;
  q.jobs = {{7, -1}, {8, -1}};
  auto all = query(*db, q);
  std::string got;
  for (const auto& r : all) got += r + ",";
  INFO(got);
  CHECK(all == std::vector<std::string>{"record-7-REQUEUED", "record-7-COMPLETED", "record-8-COMPLETED"});
  q.latest_only = true;
  CHECK(query(*db, q) == std::vector<std::string>{"record-7-COMPLETED", "record-8-COMPLETED"});
}

TEST_CASE("accounting store: a batch is on disk when apply() returns - the WAL is synced at each commit") {
  // The controller forgets its outbox records once apply() has returned, so a commit the
  // store has not synced would be lost from both by a power cut.
  test::SyncCountingVfs vfs("-wal");
  REQUIRE(vfs.install());
  test::TempDir dir;
  auto db = open_db(dir.path());
  for (int64_t seq = 1; seq <= 3; ++seq) {
    test::SyncCountingVfs::reset();
    REQUIRE(db->apply("src", {job(seq, 7, "RUNNING", 100, 110, 0)}).value() == seq);
    CHECK(test::SyncCountingVfs::syncs() >= 1);
  }
  db.reset();
  vfs.uninstall();
}

TEST_CASE("accounting store: a PostgreSQL URI's password is in no message, a bad URI's nor a down server's") {
  auto bad = store::open_acct_store("postgresql://hq:s3cret@[db1/acct");  // libpq quotes the URI here
  REQUIRE_FALSE(bad.is_ok());
  CHECK(bad.status().message().find("not a valid libpq connection URI") != std::string::npos);
  CHECK(bad.status().message().find("s3cret") == std::string::npos);
  // A server that is not there: the store opens, and says where it failed at first use.
  auto down = store::open_acct_store("postgresql://hq:s3cret@127.0.0.1:1/acct?connect_timeout=2");
  REQUIRE_MESSAGE(down.is_ok(), down.status().message());
  CHECK((*down)->where() == "postgresql://127.0.0.1:1/acct");
  auto n = (*down)->count();
  REQUIRE_FALSE(n.is_ok());
  CHECK(n.status().code() == Code::kUnavailable);
  CHECK(n.status().message().find("postgresql://127.0.0.1:1/acct") != std::string::npos);
  CHECK(n.status().message().find("s3cret") == std::string::npos);
}

TEST_CASE_TEMPLATE("accounting store: nodes' spans out of service, kept by node and start, selected by window", TestType,
                   Sqlite, Postgres) {
  test::TempDir dir;
  OPEN_STORE_OR_SKIP(dir);
  auto span = [](int64_t seq, const std::string& node, Time start, Time end) {
    AcctJob s;
    s.seq = seq;
    s.cluster = "c1";
    s.node_span = true;
    s.name = node;
    s.state = "DOWN";
    s.start_time = start;
    s.end_time = end;
    s.record = node + "@" + std::to_string(start) + "-" + std::to_string(end);
    return s;
  };
  // n1 opened then closed in one batch and n2 still open; then n1 again in a later batch.
  REQUIRE(db->apply("src", {span(1, "n1", 100, 0), span(2, "n2", 150, 0), span(3, "n1", 100, 200)}).value() == 3);
  REQUIRE(db->apply("src", {span(4, "n1", 300, 0), job(5, 9, "COMPLETED", 100, 110, 120)}).value() == 5);
  store::AcctJobQuery q;
  q.cluster = "c1";
  auto all = db->node_spans(q);
  REQUIRE(all.is_ok());
  CHECK(*all == std::vector<std::string>{"n1@100-200", "n1@300-0", "n2@150-0"});
  CHECK(db->count().value() == 1);  // the job alone: spans are not jobs
  q.start = 200, q.end = 250;  // n1's first ended at 200: not in it; n2 open: in it
  CHECK(db->node_spans(q).value() == std::vector<std::string>{"n2@150-0"});
  q.start = 0, q.end = 120;  // before n2 began
  CHECK(db->node_spans(q).value() == std::vector<std::string>{"n1@100-200"});
  q.cluster = "other";
  CHECK(db->node_spans(q).value().empty());
  // Drained and down in the same second: two spans, neither overwrites the other.
  AcctJob drain = span(7, "n3", 500, 0);
  drain.state = "DRAIN";
  drain.record = "n3-drain";
  REQUIRE(db->apply("src", {span(6, "n3", 500, 0), drain}).value() == 7);
  q.cluster = "c1", q.start = 400, q.end = 0;
  auto both = db->node_spans(q);
  REQUIRE(both.is_ok());
  CHECK(std::count_if(both->begin(), both->end(), [](const std::string& r) { return r.rfind("n3", 0) == 0; }) == 2);
}
