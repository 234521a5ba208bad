// squeue's -S (cmd/client/queue_format's sort_jobs): over random listings, the order is the
// one a plain comparison of each key's shown text or number gives (a reversed key the other
// way, the job id last), whether the listing came in that order already or not.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "cmd/client/queue_format.hpp"
#include "hq.pb.h"

using namespace hq;

namespace {

const char* const kStates[] = {"PENDING", "RUNNING", "COMPLETED", "CANCELLED", "FAILED"};
int state_number(const std::string& s) {  // Slurm's enum job_states, in the order squeue sorts
  for (int i = 0; i < 5; ++i)
    if (s == kStates[i]) return i == 0 ? 0 : i == 1 ? 1 : i + 1;
  return 99;
}

pb::QueueReply random_listing(std::mt19937& rng, size_t n, bool by_id) {
  pb::QueueReply q;
  q.set_now(100000);
  std::vector<uint64_t> ids(n);
  for (size_t i = 0; i < n; ++i) ids[i] = 1 + i * 3 + rng() % 3;
  if (!by_id) std::shuffle(ids.begin(), ids.end(), rng);
  for (uint64_t id : ids) {
    pb::Job* j = q.add_jobs();
    j->set_job_id(id);
    j->set_state(kStates[rng() % 5]);
    j->set_priority(static_cast<int64_t>(rng() % 4));
    j->set_partition(rng() % 3 == 0 ? "debug" : rng() % 2 ? "gpu" : "batch");
    j->mutable_spec()->set_name(rng() % 2 ? "job" + std::to_string(rng() % 50) : "");  // many texts, some empty
    j->mutable_spec()->set_user(rng() % 2 ? "alice" : "bob");
    j->mutable_spec()->set_partition(j->partition());
  }
  return q;
}

// The reference: each key compared in turn, as the shown text (name, user, partition) or
// the number (state, priority, id).
std::vector<uint64_t> reference_order(const pb::QueueReply& q, std::string_view keys) {
  std::vector<const pb::Job*> jobs;
  for (const auto& j : q.jobs()) jobs.push_back(&j);
  auto cmp_key = [&](const pb::Job& a, const pb::Job& b, char key) -> int {
    std::string sa, sb;
    switch (key) {
      case 't': return state_number(a.state()) - state_number(b.state());
      case 'p': return cmd::job_priority(a) < cmd::job_priority(b) ? -1 : cmd::job_priority(a) > cmd::job_priority(b);
      case 'i': return a.job_id() < b.job_id() ? -1 : a.job_id() > b.job_id();
      default: {
        std::string ta(cmd::squeue_cell(a, key, q.now(), sa)), tb(cmd::squeue_cell(b, key, q.now(), sb));
        return ta.compare(tb) < 0 ? -1 : ta.compare(tb) > 0;
      }
    }
  };
  std::sort(jobs.begin(), jobs.end(), [&](const pb::Job* a, const pb::Job* b) {
    for (size_t i = 0; i < keys.size(); ++i) {
      if (keys[i] == ',' || keys[i] == '-' || keys[i] == '+') continue;
      int c = cmp_key(*a, *b, keys[i]);
      if (i > 0 && keys[i - 1] == '-') c = -c;
      if (c != 0) return c < 0;
    }
    return a->job_id() < b->job_id();
  });
  std::vector<uint64_t> out;
  for (const auto* j : jobs) out.push_back(j->job_id());
  return out;
}

std::vector<uint64_t> ids_of(const pb::QueueReply& q) {
  std::vector<uint64_t> out;
  for (const auto& j : q.jobs()) out.push_back(j.job_id());
  return out;
}

}  // namespace

TEST_CASE("squeue -S: the order of a plain comparison of the shown values, for text and number keys") {
  std::mt19937 rng(7);
  for (std::string_view keys : {"P,t,-p", "j", "-j", "u,-P,j", "t", "-t,j", "i", "-i", "P,j,-u", "p"}) {
    for (bool by_id : {true, false}) {
      for (size_t n : {0, 1, 2, 40, 700}) {
        CAPTURE(keys);
        CAPTURE(by_id);
        CAPTURE(n);
        pb::QueueReply q = random_listing(rng, n, by_id);
        std::vector<uint64_t> want = reference_order(q, keys);
        cmd::sort_jobs(q, keys);
        CHECK(ids_of(q) == want);
      }
    }
  }
}
