// core/job_list: the compact index of ClusterState::jobs walks exactly what a walk of the
// map would (the same jobs, the same records, in id order, from an id on, for some users),
// through random additions, removals (past its compaction) and re-additions, after a copy
// of the state, after a job put in the map behind its back, with more users than its
// table holds, and with an id it cannot hold; and a walk with a filter of listing keys
// (-p, -A, -q, -R, --wckey) reads no record the filter turns down, through updates that
// change a job's key.
#include <doctest/doctest.h>

#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/cluster_state.hpp"

using namespace hq;

namespace {

using Names = std::set<std::string, std::less<>>;

Job job_of(uint64_t id, std::string user) {
  Job j;
  j.id = JobId{id};
  j.spec.user = std::move(user);
  return j;
}

// The records the index walks, and those a walk of the map gives.
std::vector<const Job*> walked(const JobList& list, const std::map<JobId, Job>& jobs, uint64_t after,
                               const Names& users, size_t most = SIZE_MAX) {
  std::vector<const Job*> out;
  list.for_each(jobs, after, users, [&](const Job& j) {
    out.push_back(&j);
    return out.size() < most;
  });
  return out;
}

std::vector<const Job*> reference(const std::map<JobId, Job>& jobs, uint64_t after, const Names& users,
                                  size_t most = SIZE_MAX) {
  std::vector<const Job*> out;
  for (auto it = jobs.upper_bound(JobId{after}); it != jobs.end() && out.size() < most; ++it)
    if (users.empty() || users.count(it->second.spec.user)) out.push_back(&it->second);
  return out;
}

std::string numbered(uint64_t id) {
  std::string out = std::to_string(id);
  out.insert(out.begin(), 'u');
  return out;
}

struct Indexed {
  std::map<JobId, Job> jobs;
  JobList list;
  void add(uint64_t id, const std::string& user) {
    auto [it, fresh] = jobs.try_emplace(JobId{id}, job_of(id, user));
    if (fresh) list.add(it->second);
  }
  void remove(uint64_t id) {
    if (!jobs.count(JobId{id})) return;
    list.remove(JobId{id});
    jobs.erase(JobId{id});
  }
};

}  // namespace

TEST_CASE("JobList walks what a walk of the map gives, through random additions and removals") {
  std::mt19937 rng(20261130);
  const std::vector<std::string> users = {"alice", "bob", "carol", "dave", "nobody"};
  Indexed x;
  uint64_t next = 1;
  size_t out_of_order = 0;  // rounds that add an id below the highest: each costs a rebuild
  for (int round = 0; round < 60; ++round) {
    for (int i = 0, n = static_cast<int>(rng() % 400); i < n; ++i) x.add(next++, users[rng() % users.size()]);
    if (rng() % 4 == 0 && next > 10) {  // now and then an id below the highest (a re-added one too)
      size_t before = x.jobs.size();
      for (int i = 0; i < 5; ++i) x.add(1 + rng() % (next - 1), users[rng() % users.size()]);
      out_of_order += x.jobs.size() > before;
    }
    for (int i = 0, n = static_cast<int>(rng() % 500); i < n && next > 1; ++i) x.remove(1 + rng() % (next - 1));
    for (int q = 0; q < 5; ++q) {
      Names who;
      for (int k = static_cast<int>(rng() % 3); k > 0; --k) who.insert(rng() % 6 == 0 ? "stranger" : users[rng() % users.size()]);
      uint64_t after = rng() % 3 == 0 ? 0 : rng() % next;
      size_t most = rng() % 3 == 0 ? 1 + rng() % 50 : SIZE_MAX;
      INFO("round " << round << " after " << after << " users " << who.size() << " most " << most);
      CHECK(walked(x.list, x.jobs, after, who, most) == reference(x.jobs, after, who, most));
    }
  }
  CHECK(x.list.live() == x.jobs.size());
  CHECK(x.list.rebuilds() <= out_of_order);  // (an id above every one left adds in order)
}

TEST_CASE("JobList::walk passes over the ids its function skips, as a walk of the map would") {
  std::mt19937 rng(11);
  const std::vector<std::string> users = {"alice", "bob"};
  Indexed x;
  uint64_t next = 1;
  for (int round = 0; round < 30; ++round) {
    for (int i = 0, n = static_cast<int>(rng() % 300); i < n; ++i) x.add(next++, users[rng() % 2]);
    for (int i = 0, n = static_cast<int>(rng() % 200); i < n && next > 1; ++i) x.remove(1 + rng() % (next - 1));
    Names who;
    if (rng() % 2) who.insert("alice");
    uint64_t stop_at = rng() % 3 == 0 ? rng() % next : 0;
    // The function's answer for a job: go on, pass over up to 40 ids, a lower id (go on), or stop.
    auto answer = [&](uint64_t id) -> uint64_t {
      if (id == stop_at) return JobList::kEnd;
      if (id % 7 == 0) return id + 1 + id % 40;
      return id % 11 == 0 ? id - 1 : id;
    };
    std::vector<uint64_t> walked, expected;
    x.list.walk(x.jobs, 0, who, [&](const Job& j) {
      walked.push_back(j.id.value);
      return answer(j.id.value);
    });
    for (auto it = x.jobs.begin(); it != x.jobs.end();) {
      if (!who.empty() && !who.count(it->second.spec.user)) {
        ++it;
        continue;
      }
      expected.push_back(it->first.value);
      uint64_t then = answer(it->first.value);
      if (then == JobList::kEnd) break;
      it = then > it->first.value ? x.jobs.upper_bound(JobId{then}) : std::next(it);
    }
    INFO("round " << round);
    CHECK(walked == expected);
    CHECK(walked.size() > 0);
  }
}

TEST_CASE("JobList: jobs added in id order and removed in any order need no rebuild") {
  std::mt19937 rng(7);
  Indexed x;
  for (uint64_t id = 1; id <= 5000; ++id) x.add(id, id % 3 ? "alice" : "bob");
  for (int i = 0; i < 4000; ++i) x.remove(1 + rng() % 5000);  // past the compaction
  for (uint64_t id = 5001; id <= 6000; ++id) x.add(id, "carol");
  CHECK(walked(x.list, x.jobs, 0, {}) == reference(x.jobs, 0, {}));
  CHECK(walked(x.list, x.jobs, 4000, Names{"bob", "carol"}) == reference(x.jobs, 4000, Names{"bob", "carol"}));
  CHECK(x.list.rebuilds() == 0);
  CHECK(x.list.live() == x.jobs.size());
}

TEST_CASE("JobList: a copy of the state walks its own records, not the original's") {
  ClusterState s;
  for (uint64_t id = 1; id <= 50; ++id) {
    auto [it, fresh] = s.jobs.try_emplace(JobId{id}, job_of(id, id % 2 ? "alice" : "bob"));
    s.job_list.add(it->second);
  }
  ClusterState copy = s;
  s.job_list.remove(JobId{7});
  s.jobs.erase(JobId{7});
  CHECK(walked(copy.job_list, copy.jobs, 0, {}) == reference(copy.jobs, 0, {}));
  CHECK(walked(copy.job_list, copy.jobs, 0, Names{"alice"}).size() == 25);
  CHECK(walked(s.job_list, s.jobs, 0, {}) == reference(s.jobs, 0, {}));
  ClusterState assigned;
  assigned = copy;
  CHECK(walked(assigned.job_list, assigned.jobs, 10, Names{"bob"}) == reference(assigned.jobs, 10, Names{"bob"}));
  ClusterState moved = std::move(copy);  // a move keeps the records where they are
  CHECK(walked(moved.job_list, moved.jobs, 0, {}) == reference(moved.jobs, 0, {}));
  CHECK(moved.job_list.rebuilds() == 1);  // the copy's own first walk, not another
  copy = std::move(moved);
  CHECK(walked(copy.job_list, copy.jobs, 0, Names{"alice"}) == reference(copy.jobs, 0, Names{"alice"}));
}

TEST_CASE("JobList is kept by apply: submissions, ends, purges and forgets, with no rebuild") {
  ClusterState s;
  for (uint64_t id = 1; id <= 3000; ++id) {
    Job j = job_of(id, id % 4 ? "alice" : "bob");
    REQUIRE(apply(s, JobSubmitted{j}));
  }
  for (uint64_t id = 1; id <= 3000; id += 2) REQUIRE(apply(s, JobEnded{JobId{id}, static_cast<Time>(id), JobState::kCompleted, 0, 0}));
  CHECK(purge_finished(s, 2001) > 0);  // the odd ones up to 2,000: past the compaction
  forget_finished(s, JobId{2999});
  CHECK(walked(s.job_list, s.jobs, 0, {}) == reference(s.jobs, 0, {}));
  CHECK(walked(s.job_list, s.jobs, 100, Names{"bob"}) == reference(s.jobs, 100, Names{"bob"}));
  CHECK(s.job_list.rebuilds() == 0);
  CHECK(s.job_list.live() == s.jobs.size());
}

TEST_CASE("JobList: a job put in the map without it is still walked (rebuilt when out of step)") {
  Indexed x;
  for (uint64_t id = 1; id <= 20; ++id) x.add(id, "alice");
  x.jobs.try_emplace(JobId{100}, job_of(100, "bob"));
  CHECK(walked(x.list, x.jobs, 0, Names{"bob"}) == reference(x.jobs, 0, Names{"bob"}));
  CHECK(walked(x.list, x.jobs, 0, {}).size() == 21);
  CHECK(x.list.rebuilds() == 1);
  // The same count, the last record replaced behind its back: still the map's records.
  x.jobs.erase(JobId{100});
  x.jobs.try_emplace(JobId{101}, job_of(101, "carol"));
  CHECK(walked(x.list, x.jobs, 0, Names{"carol"}) == reference(x.jobs, 0, Names{"carol"}));
  CHECK(x.list.rebuilds() == 2);
}

TEST_CASE("JobList: more users than its table holds are matched by their names") {
  Indexed x;
  for (uint64_t id = 1; id <= 70000; ++id) x.add(id, numbered(id));
  for (uint64_t id : {1ull, 65535ull, 65536ull, 70000ull}) {
    Names who{numbered(id)};
    auto got = walked(x.list, x.jobs, 0, who);
    REQUIRE(got.size() == 1);
    CHECK(got.front()->id.value == id);
  }
}

TEST_CASE("JobList: an id past what it holds turns it off, and the walks are the map's") {
  Indexed x;
  for (uint64_t id = 1; id <= 10; ++id) x.add(id, "alice");
  x.add(uint64_t{1} << 50, "bob");
  x.add(11, "bob");
  CHECK(walked(x.list, x.jobs, 0, {}) == reference(x.jobs, 0, {}));
  CHECK(walked(x.list, x.jobs, 5, Names{"bob"}) == reference(x.jobs, 5, Names{"bob"}));
  x.remove(3);
  CHECK(walked(x.list, x.jobs, 0, {}) == reference(x.jobs, 0, {}));
}

namespace {

// A job of random partition(s), account, QOS, reservation and wckey among a few of each.
Job keyed_job(uint64_t id, std::mt19937& rng) {
  static const std::vector<std::string> partitions = {"", "debug", "gpu", "debug,gpu"}, accounts = {"", "phys", "bio"},
                                        qos = {"", "normal", "high", "normal,high"}, resvs = {"", "maint"},
                                        wckeys = {"", "w1"};
  Job j = job_of(id, rng() % 2 ? "alice" : "bob");
  j.spec.partition = partitions[rng() % partitions.size()];
  j.partition = j.spec.partition.empty() || j.spec.partition.find(',') != std::string::npos ? "debug" : j.spec.partition;
  j.spec.account = accounts[rng() % accounts.size()];
  JobExtras extra;
  extra.qos = qos[rng() % qos.size()];
  extra.reservation = resvs[rng() % resvs.size()];
  extra.wckey = wckeys[rng() % wckeys.size()];
  j.spec.extra = std::move(extra);
  return j;
}

JobFilter random_key_filter(std::mt19937& rng) {
  static const std::vector<std::string> partitions = {"debug", "gpu", "none"}, accounts = {"phys", "bio", "x"},
                                        qos = {"normal", "high"}, resvs = {"maint"}, wckeys = {"w1"};
  JobFilter f;
  f.all_states = true;
  for (int k = static_cast<int>(rng() % 3); k > 0; --k) f.partitions.insert(partitions[rng() % partitions.size()]);
  if (rng() % 2) f.accounts.insert(accounts[rng() % accounts.size()]);
  if (rng() % 3 == 0) f.qos.insert(qos[rng() % qos.size()]);
  if (rng() % 5 == 0) f.reservations.insert(resvs[0]);
  if (rng() % 5 == 0) f.wckeys.insert(wckeys[0]);
  if (rng() % 3 == 0) f.users.insert("alice");
  return f;
}

}  // namespace

TEST_CASE("JobList: a walk with a filter of partitions, accounts, QOS... reads none of the jobs it turns down") {
  std::mt19937 rng(20261202);
  ClusterState s;
  uint64_t next = 1;
  for (int round = 0; round < 40; ++round) {
    for (int i = 0, n = static_cast<int>(rng() % 200); i < n; ++i) REQUIRE(apply(s, JobSubmitted{keyed_job(next++, rng)}));
    // Updates: a job's key changes under the same record (scontrol update job account=...).
    for (int i = 0, n = static_cast<int>(rng() % 40); i < n && next > 1; ++i) {
      uint64_t id = 1 + rng() % (next - 1);
      auto it = s.jobs.find(JobId{id});
      if (it == s.jobs.end() || it->second.state != JobState::kPending) continue;
      Job to = keyed_job(id, rng);
      to.spec.user = it->second.spec.user;
      REQUIRE(apply(s, JobUpdated{JobId{id}, 0, to}));
    }
    for (int i = 0, n = static_cast<int>(rng() % 60); i < n && next > 1; ++i) {
      uint64_t id = 1 + rng() % (next - 1);
      if (s.jobs.count(JobId{id}) && !is_terminal(s.jobs.at(JobId{id}).state))
        REQUIRE(apply(s, JobEnded{JobId{id}, 1, JobState::kCompleted, 0, 0}));
    }
    if (round % 10 == 9) purge_finished(s, 2);
    for (int q = 0; q < 5; ++q) {
      JobFilter f = random_key_filter(rng);
      std::vector<uint64_t> shown, expected;
      size_t read = 0, turned_down = 0;
      s.job_list.for_each(s.jobs, 0, f.users, [&](const Job& j) {
        ++read;
        if (!key_matches(f, listing_key(j))) ++turned_down;
        if (job_matches(f, j)) shown.push_back(j.id.value);
        return true;
      }, &f);
      for (const auto& [id, j] : s.jobs)
        if (job_matches(f, j)) expected.push_back(id.value);
      INFO("round " << round << " query " << q);
      CHECK(shown == expected);
      CHECK(turned_down == 0);
      CHECK(read == expected.size());
    }
  }
  CHECK(s.job_list.rebuilds() == 0);
  CHECK(s.job_list.keys() <= 4 * 3 * 4 * 2 * 2);
}

TEST_CASE("JobList: more listing keys than its table holds are read from the records, and numbered once jobs go") {
  ClusterState s;
  for (uint64_t id = 1; id <= 66000; ++id) {
    Job j = job_of(id, "alice");
    j.spec.account = numbered(id);
    REQUIRE(apply(s, JobSubmitted{j}));
  }
  CHECK(s.job_list.keys() == 0xffff);
  auto listed = [&](const std::string& account, size_t& read) {
    JobFilter f;
    f.accounts.insert(account);
    std::vector<uint64_t> got;
    read = 0;
    s.job_list.for_each(s.jobs, 0, f.users, [&](const Job& j) {
      ++read;
      if (job_matches(f, j)) got.push_back(j.id.value);
      return true;
    }, &f);
    return got;
  };
  size_t read = 0;
  for (uint64_t id : {1ull, 65535ull, 65536ull, 66000ull}) CHECK(listed(numbered(id), read) == std::vector<uint64_t>{id});
  CHECK(read > 400);  // the 465 jobs beyond the table are read whatever the filter
  // Most jobs end and go: the compaction that follows keeps only the keys still in use,
  // and the jobs that were beyond the table get numbers of their own.
  for (uint64_t id = 1; id <= 65000; ++id) REQUIRE(apply(s, JobEnded{JobId{id}, 1, JobState::kCompleted, 0, 0}));
  purge_finished(s, 2);
  CHECK(s.jobs.size() == 1000);
  // (the last compaction kept the keys of the jobs there then: at most twice those left)
  CHECK(s.job_list.keys() <= 2000);
  CHECK(listed(numbered(66000), read) == std::vector<uint64_t>{66000});
  CHECK(read == 1);
  CHECK(listed(numbered(65001), read) == std::vector<uint64_t>{65001});
  CHECK(read == 1);
  CHECK(s.job_list.rebuilds() == 0);
}
