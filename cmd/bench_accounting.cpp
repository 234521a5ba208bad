// `hq bench accounting`: the accounting store's targets (issue 18), on SQLite (a temp file),
// or with --store URI on a PostgreSQL database (which should be empty: ingest adds to it).
//  - ingest: job records applied to the store in the shipper's batches (records/s);
//  - queries over the filled store, in process (the store's own time) and as sacct processes
//    against a controller that serves that store (what a user times): `sacct -u USER -S <a
//    week ago>` and `sacct -j <500 ids>`;
//  - shipping: job-end records appended to a real journal and shipped to the store through
//    the controller's AccountingLink, from the first append to the store's acknowledgement.
// Everything lives in one temp dir, removed at the end with every process it started.
// One thread, plus the journal's and the store's own worker threads in the shipping part.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <string>

#include "cmd/bench_cluster.hpp"
#include "cmd/bench_timing.hpp"
#include "cmd/commands.hpp"
#include "cmd/post_queue.hpp"
#include "cmd/controller/accounting.hpp"
#include "net/clock.hpp"
#include "store/acct_store.hpp"
#include "store/journal.hpp"

namespace hq::cmd {
namespace {

constexpr Time kNow = 1'800'000'000;          // the bench's "now" (2027-01-15)
constexpr Time kSpan = 90 * 86400;            // stored jobs ended within the 90 days before it
constexpr uint32_t kFirstUid = 20000;
constexpr size_t kBatch = 2000;               // the shipper's batch

// A finished job as the controller records it: 1-16 nodes, a name from a small set, one
// of 4 partitions and 20 accounts. Jobs end in about the order of their ids (as records
// reach the store: when jobs end), spread over the 90 days before kNow, within an hour.
Job finished_job(uint64_t id, uint64_t jobs, int32_t users, std::mt19937_64& rng) {
  Job j;
  j.id = JobId{id};
  int32_t user = static_cast<int32_t>(rng() % static_cast<uint64_t>(users));
  j.spec.uid = kFirstUid + static_cast<uint32_t>(user);
  j.spec.user = "user" + std::to_string(user);
  j.spec.gid = 100;
  j.spec.name = "sim-" + std::to_string(rng() % 50);
  j.spec.account = "acct" + std::to_string(user % 20);
  j.spec.workdir = "/home/" + j.spec.user;
  int32_t nodes = 1 + static_cast<int32_t>(rng() % 16);
  j.spec.nodes_min = nodes;
  j.spec.ntasks = nodes * 32;
  j.partition = "part" + std::to_string(rng() % 4);
  j.partitions = {j.partition};
  j.time_limit = 86400;
  j.end_time = kNow - kSpan + static_cast<Time>(id * kSpan / std::max<uint64_t>(jobs, 1)) - static_cast<Time>(rng() % 3600);
  j.start_time = j.end_time - 60 - static_cast<Time>(rng() % 86400);
  j.submit_time = j.eligible_time = j.start_time - static_cast<Time>(rng() % 3600);
  for (int32_t n = 0; n < nodes; ++n) j.alloc.push_back({"n" + std::to_string(1 + (id * 7 + n) % 10000), 32, 65536, 32, {}});
  bool failed = rng() % 10 == 0;
  j.state = failed ? JobState::kFailed : JobState::kCompleted;
  j.exit_code = failed ? 1 : 0;
  j.peak_mem_bytes = static_cast<int64_t>(rng() % (64ull << 30));
  j.cpu_time_usec = (j.end_time - j.start_time) * 1'000'000 * nodes * 16;
  return j;
}

// Fills the store with `jobs` records; returns the records/s of the applies alone.
Result<double> ingest(store::AcctStore& db, uint64_t jobs, int32_t users) {
  std::mt19937_64 rng(18);
  double applying = 0;
  for (uint64_t first = 1; first <= jobs; first += kBatch) {
    std::vector<store::AcctJob> batch;
    for (uint64_t id = first; id < first + kBatch && id <= jobs; ++id) {
      auto row = acct_columns({static_cast<int64_t>(id), encode_acct_record(finished_job(id, jobs, users, rng))}, "bench");
      if (!row) return row.status();
      batch.push_back(std::move(row).value());
    }
    double t0 = net::mono_seconds();
    auto seq = db.apply("bench-source", batch);
    applying += net::mono_seconds() - t0;
    if (!seq) return seq.status();
  }
  return static_cast<double>(jobs) / applying;
}

store::AcctJobQuery user_week(uint32_t uid) {
  store::AcctJobQuery q;
  q.cluster = "bench";
  q.uids = {uid};
  q.start = kNow - 7 * 86400;
  q.end = kNow;
  return q;
}

std::vector<uint64_t> some_ids(uint64_t jobs, size_t count) {
  std::mt19937_64 rng(500);
  std::vector<uint64_t> ids;
  for (size_t i = 0; i < count; ++i) ids.push_back(1 + rng() % jobs);
  return ids;
}

// The in-process query times: the store's own share of a sacct.
void store_queries(store::AcctStore& db, uint64_t jobs, int32_t repeat) {
  size_t rows = 0;
  auto by_user = timed_ms(repeat, [&] {
    auto r = db.query(user_week(kFirstUid + 7));
    rows = r ? r->size() : 0;
    return static_cast<bool>(r);
  });
  std::printf("store: sacct -u USER -S <a week ago> over %llu jobs: %.1f ms median of %d (%zu records)\n",
              static_cast<unsigned long long>(jobs), median_ms(by_user), repeat, rows);
  store::AcctJobQuery q;
  q.cluster = "bench";
  for (uint64_t id : some_ids(jobs, 500)) q.jobs.emplace_back(id, -1);
  auto by_id = timed_ms(repeat, [&] {
    auto r = db.query(q);
    rows = r ? r->size() : 0;
    if (!r) std::fprintf(stderr, "hq bench accounting: %s\n", r.status().message().c_str());
    return static_cast<bool>(r);
  });
  std::printf("store: sacct -j <500 ids> over %llu jobs: %.1f ms median of %d (%zu records)\n",
              static_cast<unsigned long long>(jobs), median_ms(by_id), repeat, rows);
}

// One `sacct ARGS...` process against the bench cluster, as a user's shell runs it; its
// output goes to `out`. False when it fails.
bool run_sacct(const BenchCluster& c, std::vector<std::string> args, const std::string& out) {
  args.insert(args.begin(), "sacct");
  return run_client(c, args, out);
}

size_t count_lines(const std::string& path) {
  std::ifstream in(path);
  return static_cast<size_t>(std::count(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>(), '\n'));
}

// The same two queries as sacct processes through a controller serving the store.
Status process_queries(const std::string& db_path, uint64_t jobs, int32_t repeat) {
  BenchCluster c;
  c.accounting_db = db_path;
  if (Status s = start_cluster(c, 0, 1, false); !s) return s;
  std::string out = c.dir + "/sacct.out";
  // The first answer waits for the controller to open the store and load its model.
  double t0 = net::mono_seconds();
  while (!run_sacct(c, {"-n", "-X", "-j", "1"}, out))
    if (net::mono_seconds() - t0 > 60) return unavailable("sacct did not answer within 60 s; see " + c.dir + "/controller.log");
  std::printf("process: first sacct answered %.0f ms after the controller was up (%llu jobs stored)\n",
              1000.0 * (net::mono_seconds() - t0), static_cast<unsigned long long>(jobs));
  const std::vector<std::string> by_user = {"-X", "-u", std::to_string(kFirstUid + 7), "-S", net::local_time_text(kNow - 7 * 86400),
                                            "-E", net::local_time_text(kNow)};
  auto ms = timed_ms(repeat, [&] { return run_sacct(c, by_user, out); });
  if (ms.empty()) return unavailable("sacct -u failed");
  std::printf("process: sacct -X -u USER -S <a week ago>: %.1f ms median of %d (%zu lines)\n", median_ms(ms), repeat,
              count_lines(out));
  std::string ids;
  for (uint64_t id : some_ids(jobs, 500)) ids += (ids.empty() ? "" : ",") + std::to_string(id);
  ms = timed_ms(repeat, [&] { return run_sacct(c, {"-X", "-j", ids}, out); });
  if (ms.empty()) return unavailable("sacct -j failed");
  std::printf("process: sacct -X -j <500 ids>: %.1f ms median of %d (%zu lines)\n", median_ms(ms), repeat, count_lines(out));
  return Status::ok();
}


// `count` job ends appended one per journal event, as the controller appends them, and
// shipped as it ships them; records/s from the first append to the last acknowledgement.
Result<double> shipping(const std::string& dir, const std::string& store_path, int32_t count) {
  auto journal = store::Journal::open(dir + "/state.db");
  if (!journal) return journal.status();
  if (auto loaded = (*journal)->load(); !loaded) return loaded.status();
  PostQueue loop;
  auto post = [&loop](std::function<void()> fn) { loop.post(std::move(fn)); };
  (*journal)->start(post);
  // A cluster of its own: the ingest's job ids are not overwritten in a shared database.
  AccountingLink link(**journal, "bench-ship", post, post);  // ships at once: no delay
  if (Status s = link.open(store_path); !s) return s;
  auto db = store::open_acct_store(store_path);
  if (!db) return db.status();
  auto before = (*db)->count();
  if (!before) return before.status();
  std::mt19937_64 rng(1000);
  std::vector<std::string> records;
  for (int32_t i = 1; i <= count; ++i) records.push_back(encode_acct_record(finished_job(static_cast<uint64_t>(i), static_cast<uint64_t>(count), 100, rng)));
  int32_t durable = 0;
  double t0 = net::mono_seconds();
  for (auto& record : records)
    (*journal)->append("job ended", {std::move(record)}, [&](const Status& s) {
      durable += s ? 1 : 0;
      link.ship();
    });
  bool ok = loop.run_until([&] { return durable == count; }, 120);
  // The last acknowledgement: the store has every record.
  ok = ok && loop.run_until([&] {
         link.ship();
         auto n = (*db)->count();
         return n && *n == *before + count;
       }, 120);
  double elapsed = net::mono_seconds() - t0;
  link.stop();
  (*journal)->stop();
  if (!ok) return unavailable("shipping did not finish within 120 s");
  return count / elapsed;
}

}  // namespace

int bench_accounting(const Args& args) {
  uint64_t jobs = static_cast<uint64_t>(flag(args, "--jobs", 1000000));
  int32_t users = flag(args, "--users", 100);
  int32_t repeat = flag(args, "--repeat", 5);
  int32_t ends = flag(args, "--ends", 20000);
  std::string store_uri;
  for (size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == "--store") store_uri = args[i + 1];
  if (!store_uri.empty() && !store::is_postgres_uri(store_uri))
    return std::fprintf(stderr, "hq bench accounting: --store takes a PostgreSQL URI (postgresql://...)\n"), 2;
  char tmpl[] = "/tmp/hq-bench-acct-XXXXXX";
  if (!mkdtemp(tmpl)) return std::fprintf(stderr, "hq bench accounting: mkdtemp failed\n"), 1;
  std::string dir = tmpl;
  auto cleanup = [&] {
    std::error_code ec;
    if (!getenv("HQ_BENCH_KEEP")) std::filesystem::remove_all(dir, ec);
  };
  int rc = 1;
  do {
    std::string db_path = store_uri.empty() ? dir + "/accounting.db" : store_uri;
    const char* kind = store_uri.empty() ? "SQLite" : "PostgreSQL";
    auto db = store::open_acct_store(db_path);
    if (!db) { std::fprintf(stderr, "hq bench accounting: %s\n", db.status().message().c_str()); break; }
    auto rate = ingest(**db, jobs, users);
    if (!rate) { std::fprintf(stderr, "hq bench accounting: %s\n", rate.status().message().c_str()); break; }
    std::printf("ingest: %llu job records into %s: %.0f records/s (batches of %zu, %d users)\n",
                static_cast<unsigned long long>(jobs), kind, *rate, kBatch, users);
    store_queries(**db, jobs, repeat);
    db->reset();
    if (Status s = process_queries(db_path, jobs, repeat); !s) {
      std::fprintf(stderr, "hq bench accounting: %s\n", s.message().c_str());
      break;
    }
    auto shipped = shipping(dir, store_uri.empty() ? dir + "/shipped.db" : store_uri, ends);
    if (!shipped) { std::fprintf(stderr, "hq bench accounting: %s\n", shipped.status().message().c_str()); break; }
    std::printf("shipping: %d job ends, journal to store: %.0f records/s\n", ends, *shipped);
    rc = 0;
  } while (false);
  cleanup();
  return rc;
}

}  // namespace hq::cmd
