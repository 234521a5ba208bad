// squeue's filters applied in the controller give the rows a plain reference gives: a
// randomised queue (pending, held, running, cancelled; several users, names, accounts,
// wckeys), random -t/-u/-n/-A/--wckey/-w/-L/-j requests, and the reference reading the
// whole unfiltered listing. (-t without PENDING, and -w, walk the running and ended jobs'
// indexes instead of every job; -A and --wckey pass over jobs by their listing keys.)
// The real Controller on an in-memory journal.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "controller_harness.hpp"

using namespace hq;
using hq::test::ControllerHarness;

namespace {

// Slurm's -t words for the states this queue holds, by the state each names.
const std::vector<std::pair<std::string, std::string>> kStateWords = {
    {"PENDING", "pd"}, {"PENDING", "PENDING"}, {"CANCELLED", "CA"}, {"CANCELLED", "cancelled"}, {"RUNNING", "r"}};

struct Request {
  std::vector<std::string> states;  // as typed, and the states they name
  std::set<std::string> state_names, users, names, accounts, wckeys, nodes;
  bool licenses = false;
  bool all_states = false;  // no -t, every state (QueueRequest.include_finished)
  std::set<uint64_t> ids;
};

// Picks `k` of `from` (maybe none).
template <typename T>
std::vector<T> some(std::mt19937& rng, const std::vector<T>& from, size_t k) {
  std::vector<T> out;
  for (size_t i = 0; i < k; ++i) out.push_back(from[rng() % from.size()]);
  return out;
}

std::string comma_list(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : ",") + w;
  return out;
}

// The reference: every job of the full listing that the request names, by reading its fields.
std::set<uint64_t> reference(const pb::QueueReply& all, const Request& r) {
  std::set<uint64_t> out;
  for (const auto& j : all.jobs()) {
    if (!r.ids.empty() && !r.ids.count(j.job_id())) continue;
    bool live = j.state() == "PENDING" || j.state() == "RUNNING";
    if (r.state_names.empty() ? (!live && r.ids.empty() && !r.all_states) : !r.state_names.count(j.state())) continue;
    if (!r.users.empty() && !r.users.count(j.spec().user())) continue;
    if (!r.names.empty() && !r.names.count(j.spec().name())) continue;
    if (!r.accounts.empty() && !r.accounts.count(j.spec().account())) continue;
    if (!r.wckeys.empty() && !r.wckeys.count(j.spec().wckey())) continue;
    if (!r.nodes.empty() && std::none_of(j.alloc().begin(), j.alloc().end(),
                                         [&](const auto& a) { return r.nodes.count(a.node()) > 0; }))
      continue;
    if (r.licenses) continue;
    out.insert(j.job_id());
  }
  return out;
}

}  // namespace

TEST_CASE("squeue filters in the controller: the same rows as a reference over a randomised queue") {
  ControllerHarness h("n[1-2]", 4, std::make_shared<test::MemoryLog::Disk>(), Time{1000});
  REQUIRE(h.ok);
  std::mt19937 rng(17);
  const std::vector<std::string> names = {"a", "b", "train", "x y"}, accounts = {"", "phys", "bio"},
                                 wckeys = {"", "w1", "w2"}, nodes = {"n1", "n2", "n9"};
  std::vector<uint64_t> ids;
  for (int i = 0; i < 120; ++i) {
    auto req = ControllerHarness::job_request();
    req.mutable_spec()->set_name(names[rng() % names.size()]);
    req.mutable_spec()->set_account(accounts[rng() % accounts.size()]);
    req.mutable_spec()->set_wckey(wckeys[rng() % wckeys.size()]);
    req.mutable_spec()->set_hold(rng() % 3 == 0);
    auto r = h.submit_request(req, ControllerHarness::user(1000 + static_cast<uint32_t>(rng() % 3)));
    REQUIRE(r.is_ok());
    ids.push_back(r->job_id());
  }
  // Two agents: some jobs start (and some of those are cancelled while running).
  auto agents = test::register_agents(h, {"n1", "n2"});
  REQUIRE(agents.size() == 2);
  std::vector<uint64_t> cancel;
  for (uint64_t id : ids)
    if (rng() % 4 == 0) cancel.push_back(id);
  REQUIRE(h.cancel(cancel, "k", net::Identity{}).is_ok());
  h.settle();
  {  // the agents report the cancelled running jobs' ends: ended jobs that held nodes (-w)
    pb::QueueRequest running;
    running.set_state_filter("r");
    pb::QueueReply now_running = h.ctl->queue(running, net::Identity{});
    std::set<uint64_t> cancelled(cancel.begin(), cancel.end());
    for (const auto& j : now_running.jobs()) {
      if (!cancelled.count(j.job_id()) || j.alloc_size() == 0) continue;
      pb::JobEnded e;
      e.set_job_id(j.job_id());
      e.set_state("CANCELLED");
      const std::string& node = j.alloc(0).node();
      h.ctl->agent_job_ended(node, agents[node == "n1" ? 0 : 1], e);
    }
    h.settle();
  }

  pb::QueueRequest everything;
  everything.set_include_finished(true);
  pb::QueueReply all = h.ctl->queue(everything, net::Identity{});
  REQUIRE(all.jobs_size() == static_cast<int>(ids.size()));
  std::map<std::string, int> by_state;
  for (const auto& j : all.jobs()) ++by_state[j.state()];
  CAPTURE(by_state.size());
  REQUIRE(by_state["RUNNING"] > 0);
  REQUIRE(by_state["CANCELLED"] > 0);
  REQUIRE(by_state["PENDING"] > 0);
  // Ended jobs that held nodes: what -w with every state finds among the ended ones.
  REQUIRE(std::count_if(all.jobs().begin(), all.jobs().end(),
                        [](const pb::Job& j) { return j.state() == "CANCELLED" && j.alloc_size() > 0; }) > 0);
  std::vector<std::string> users;
  for (const auto& j : all.jobs()) users.push_back(j.spec().user());

  for (int round = 0; round < 300; ++round) {
    Request r;
    pb::QueueRequest q;
    for (const auto& [state, word] : some(rng, kStateWords, rng() % 3)) {
      r.states.push_back(word);
      r.state_names.insert(state);
    }
    q.set_state_filter(comma_list(r.states));
    if (r.states.empty() && rng() % 4 == 0) q.set_include_finished(true), r.all_states = true;
    for (const auto& u : some(rng, users, rng() % 3)) q.add_users(u), r.users.insert(u);
    for (const auto& n : some(rng, names, rng() % 3)) q.add_names(n), r.names.insert(n);
    for (const auto& a : some(rng, accounts, rng() % 2)) q.add_accounts(a), r.accounts.insert(a);
    for (const auto& w : some(rng, wckeys, rng() % 3 == 0 ? 1 + rng() % 2 : 0)) q.add_wckeys(w), r.wckeys.insert(w);
    for (const auto& n : some(rng, nodes, rng() % 4 == 0 ? 1 + rng() % 2 : 0)) q.add_nodes(n), r.nodes.insert(n);
    if (rng() % 30 == 0) q.add_licenses("lic"), r.licenses = true;
    if (rng() % 4 == 0)
      for (uint64_t id : some(rng, ids, 1 + rng() % 4)) q.add_job_ids(id), r.ids.insert(id);
    q.set_brief(rng() % 2 == 0);
    std::set<uint64_t> got;
    pb::QueueReply shown = h.ctl->queue(q, net::Identity{});
    for (const auto& j : shown.jobs()) got.insert(j.job_id());
    std::string asked = q.ShortDebugString();
    CAPTURE(asked);
    CHECK(got == reference(all, r));
  }
}
