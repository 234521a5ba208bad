// squeue's arrays grouped by the controller (QueueRequest.collapse_arrays, core/array_rows)
// give the rows the client's own grouping gives over every task: arrays held and not,
// tasks split off one by one (a time limit or a hold of their own), started and cancelled,
// under several sort keys; a later page comes ungrouped. The real Controller on an
// in-memory journal; and ArrayGroups alone over arrays whose tasks interleave.
#include <doctest/doctest.h>

#include <random>

#include "../core/builders.hpp"
#include "cmd/client/job_query.hpp"
#include "cmd/client/queue_format.hpp"
#include "core/array_rows.hpp"
#include "controller_harness.hpp"
#include "golden_cases.hpp"
#include "net/brief_wire.hpp"
#include "net/wire_read.hpp"

using namespace hq;
using hq::test::ControllerHarness;

namespace {

// The rows squeue prints for `reply` sorted by `keys`: the job's id, the row's id and tasks.
std::vector<std::string> rows_of(pb::QueueReply reply, std::string_view keys) {
  cmd::sort_jobs(reply, keys);
  std::vector<std::string> out;
  for (const auto& r : cmd::queue_rows(reply, false))
    out.push_back(std::to_string(r.job->job_id()) + " " + r.id + " " + r.tasks);
  return out;
}

// The controller's brief listing as the wire carries it (what squeue's default asks for).
pb::QueueReply brief_wire(const cmd::Controller& ctl, const pb::QueueRequest& q) {
  std::string buf(net::kQueueReplyHeadRoom, '\0');
  ctl.queue_brief_wire(q, net::Identity{}, buf);
  pb::QueueReply r;
  REQUIRE(r.ParseFromString(buf.substr(net::kQueueReplyHeadRoom)));
  return r;
}

// squeue's default columns over `reply`'s jobs sorted by `keys`, as the client prints them.
std::string client_text(pb::QueueReply reply, std::string_view keys) {
  cmd::sort_jobs(reply, keys);
  auto rows = cmd::queue_rows(reply, false);
  return test::capture_output([&] {
    cmd::print_formatted(rows, reply.now(), parse_squeue_format(kSqueueDefaultFormat), true);
    return 0;
  }).out;
}

// The text the controller makes for `q` (Controller::queue_listing), read back as squeue does.
std::string listing_text(const cmd::Controller& ctl, pb::QueueRequest q, std::string_view keys) {
  q.mutable_render()->set_wanted(true);
  q.mutable_render()->set_sort(std::string(keys));
  q.mutable_render()->set_header(true);
  std::string buf(net::kQueueReplyHeadRoom, '\0');
  std::optional<size_t> from = ctl.queue_listing(q, net::Identity{}, buf);
  if (!from) return "(not made)";
  size_t frame = net::frame_queue_reply_in_place(1, buf, *from);
  auto parts = net::split_queue_reply(std::string_view(buf).substr(frame + 4));
  if (!parts || !parts->listing || !parts->jobs.empty()) return "(no listing)";
  return std::string(*parts->listing);
}

// Runs one control request (hold, release) or update as root, to its durable end.
void control(ControllerHarness& h, const std::string& action, const std::string& job) {
  pb::JobControlRequest req;
  req.set_action(action);
  req.add_jobs(job);
  h.ctl->job_control(req, net::Identity{}, [](Result<pb::JobControlReply>) {});
  h.settle();
}
void set_time_limit(ControllerHarness& h, const std::string& job, const std::string& limit) {
  pb::JobUpdateRequest req;
  req.add_jobs(job);
  req.add_settings("TimeLimit=" + limit);
  h.ctl->update_jobs(req, net::Identity{}, [](Result<pb::JobUpdateReply>) {});
  h.settle();
}

}  // namespace

TEST_CASE("squeue: arrays grouped by the controller give the rows the client's grouping gives") {
  ControllerHarness h("n[1-2]", 4, std::make_shared<test::MemoryLog::Disk>(), Time{1000});
  REQUIRE(h.ok);
  std::mt19937 rng(23);
  for (int i = 0; i < 14; ++i) {
    bool array = i % 4 != 3;
    auto req = ControllerHarness::job_request("", array ? "1-" + std::to_string(1 + rng() % 30) : "");
    req.mutable_spec()->set_name(rng() % 2 ? "a" : "b");
    req.mutable_spec()->set_hold(rng() % 3 == 0);
    REQUIRE(h.submit_request(req, ControllerHarness::user(1000 + static_cast<uint32_t>(rng() % 2))));
  }
  pb::QueueRequest everything;
  everything.set_include_finished(true);
  std::vector<std::string> tasks;
  pb::QueueReply submitted = h.ctl->queue(everything, net::Identity{});
  for (const auto& j : submitted.jobs())
    if (j.array_job_id() != 0) tasks.push_back(std::to_string(j.array_job_id()) + "_" + std::to_string(j.array_task_id()));
  REQUIRE(tasks.size() > 40);
  // Tasks split off their arrays' rows: a time limit, a hold, a release of their own.
  for (int i = 0; i < 12; ++i) set_time_limit(h, tasks[rng() % tasks.size()], rng() % 2 ? "7" : "9");
  for (int i = 0; i < 6; ++i) control(h, "hold", tasks[rng() % tasks.size()]);
  for (int i = 0; i < 4; ++i) control(h, "release", tasks[rng() % tasks.size()]);
  // Some start (two nodes of 4 CPUs), some are cancelled.
  auto agents = test::register_agents(h, {"n1", "n2"});
  REQUIRE(agents.size() == 2);
  std::vector<uint64_t> cancel;
  pb::QueueReply now_listed = h.ctl->queue(everything, net::Identity{});
  for (const auto& j : now_listed.jobs())
    if (rng() % 9 == 0) cancel.push_back(j.job_id());
  REQUIRE(h.cancel(cancel, "k", net::Identity{}).is_ok());
  h.settle();

  size_t grouped = 0;
  for (std::string_view keys : {"P,t,-p", "i", "P,t,-p,j", "-p,u,i", "l,r"}) {
    REQUIRE(cmd::sort_keeps_array_groups(keys));
    for (bool finished : {false, true}) {
      pb::QueueRequest q;
      q.set_brief(true);
      q.set_include_finished(finished);
      std::vector<std::string> by_client = rows_of(h.ctl->queue(q, net::Identity{}), keys);
      q.set_collapse_arrays(true);
      pb::QueueReply collapsed = brief_wire(*h.ctl, q);
      CAPTURE(keys);
      CAPTURE(finished);
      CHECK(rows_of(collapsed, keys) == by_client);
      // The text the controller makes of them (QueueRequest.render): the client's lines of
      // every task, grouped by the client.
      pb::QueueRequest each = q;
      each.set_collapse_arrays(false);
      CHECK(listing_text(*h.ctl, q, keys) == client_text(h.ctl->queue(each, net::Identity{}), keys));
      CHECK(collapsed.jobs_size() == static_cast<int>(by_client.size()));
      for (const auto& j : collapsed.jobs()) grouped += !j.array_tasks().empty();
      // A later page (a listing longer than one page) comes ungrouped: an earlier page's
      // groups cannot be known again once the queue has changed. The client groups it.
      uint64_t after = collapsed.jobs(collapsed.jobs_size() / 2).job_id();
      q.set_after_id(after);
      pb::QueueReply later = brief_wire(*h.ctl, q);
      q.set_collapse_arrays(false);
      pb::QueueReply plain = brief_wire(*h.ctl, q);
      CHECK(later.SerializeAsString() == plain.SerializeAsString());
      for (const auto& j : later.jobs()) CHECK(j.array_tasks().empty());
    }
  }
  CHECK(grouped > 10);  // the queue did have arrays to group

  // A listing of named jobs (squeue -j): arrays by their id, a task by its own job id, a
  // plain job, an id that is no job's. Grouped alike, and the unknown id still said.
  std::vector<uint64_t> arrays, others;
  for (const auto& j : now_listed.jobs())
    (j.array_job_id() == j.job_id() ? arrays : others).push_back(j.job_id());
  REQUIRE(arrays.size() >= 3);
  REQUIRE(others.size() >= 2);
  size_t named_grouped = 0;
  for (int round = 0; round < 6; ++round) {
    pb::QueueRequest q;
    q.set_brief(true);
    q.add_job_ids(arrays[rng() % arrays.size()]);
    q.add_job_ids(arrays[rng() % arrays.size()]);
    q.add_job_ids(others[rng() % others.size()]);
    q.add_job_ids(999999);
    pb::QueueRequest each = q;
    std::vector<std::string> by_client = rows_of(h.ctl->queue(each, net::Identity{}), "P,t,-p");
    q.set_collapse_arrays(true);
    pb::QueueReply collapsed = brief_wire(*h.ctl, q);
    CAPTURE(q.ShortDebugString());
    CHECK(rows_of(collapsed, "P,t,-p") == by_client);
    CHECK(collapsed.unknown_ids_size() == 1);
    CHECK(listing_text(*h.ctl, q, "P,t,-p") == client_text(h.ctl->queue(each, net::Identity{}), "P,t,-p"));
    for (const auto& j : collapsed.jobs()) named_grouped += !j.array_tasks().empty();
  }
  CHECK(named_grouped > 0);
}

TEST_CASE("squeue: the arrays a grouped listing keeps between listings give the client's rows as the queue changes") {
  ControllerHarness h("n[1-2]", 4, std::make_shared<test::MemoryLog::Disk>(), Time{1000});
  REQUIRE(h.ok);
  std::mt19937 rng(41);
  pb::QueueRequest everything;
  everything.set_include_finished(true);
  auto some_job = [&](bool task_only) -> std::string {
    std::vector<std::string> names;
    pb::QueueReply listed = h.ctl->queue(everything, net::Identity{});
    for (const auto& j : listed.jobs())
      if (j.array_job_id() != 0) names.push_back(std::to_string(j.array_job_id()) + "_" + std::to_string(j.array_task_id()));
      else if (!task_only) names.push_back(std::to_string(j.job_id()));
    return names.empty() ? "" : names[rng() % names.size()];
  };
  size_t grouped = 0;
  for (int round = 0; round < 36; ++round) {
    switch (rng() % 6) {
      case 0:
      case 1: {
        auto req = ControllerHarness::job_request("", rng() % 5 ? "1-" + std::to_string(1 + rng() % 25) : "");
        req.mutable_spec()->set_name(rng() % 2 ? "a" : "b");
        req.mutable_spec()->set_hold(rng() % 3 == 0);
        REQUIRE(h.submit_request(req, ControllerHarness::user(1000 + static_cast<uint32_t>(rng() % 2))));
        break;
      }
      case 2:
        if (std::string t = some_job(true); !t.empty()) set_time_limit(h, t, rng() % 2 ? "7" : "9");
        break;
      case 3:
        if (std::string t = some_job(true); !t.empty()) control(h, rng() % 2 ? "hold" : "release", t);
        break;
      case 4:
        if (std::string t = some_job(false); !t.empty()) {
          pb::CancelRequest req;
          if (t.find('_') != std::string::npos) req.add_tasks(t);
          else req.add_job_ids(std::stoull(t));
          h.ctl->cancel(req, net::Identity{}, [](Result<pb::CancelReply>) {});
          h.settle();
        }
        break;
      default:
        if (round > 12) (void)test::register_agents(h, {round % 2 ? "n1" : "n2"});  // some start
        h.settle();
    }
    for (int f = 0; f < 4; ++f) {  // no filter, -t PD, -n a, every state
      pb::QueueRequest q;
      q.set_brief(true);
      if (f == 1) q.set_state_filter("PD");
      if (f == 2) q.add_names("a");
      if (f == 3) q.set_include_finished(true);
      std::vector<std::string> by_client = rows_of(h.ctl->queue(q, net::Identity{}), "P,t,-p");
      pb::QueueRequest each = q;
      q.set_collapse_arrays(true);
      pb::QueueReply collapsed = brief_wire(*h.ctl, q);
      CAPTURE(round);
      CAPTURE(f);
      CHECK(rows_of(collapsed, "P,t,-p") == by_client);
      CHECK(listing_text(*h.ctl, q, "P,t,-p") == client_text(h.ctl->queue(each, net::Identity{}), "P,t,-p"));
      for (const auto& j : collapsed.jobs()) grouped += !j.array_tasks().empty();
      size_t read = h.ctl->array_tasks_read();
      (void)brief_wire(*h.ctl, q);  // nothing changed since: no task read again
      CHECK(h.ctl->array_tasks_read() == read);
    }
  }
  CHECK(grouped > 20);
}

TEST_CASE("squeue: a grouped listing reads an array's tasks again only once one of them changed") {
  ControllerHarness h("n[1-2]", 4, std::make_shared<test::MemoryLog::Disk>(), Time{1000});
  REQUIRE(h.ok);
  std::vector<uint64_t> arrays;
  for (int i = 0; i < 3; ++i) {
    auto req = ControllerHarness::job_request("", "1-50");
    req.mutable_spec()->set_hold(true);
    auto r = h.submit_request(req);
    REQUIRE(r);
    arrays.push_back(r->job_id());
  }
  pb::QueueRequest q;
  q.set_brief(true);
  q.set_collapse_arrays(true);
  auto rows = [&] {
    std::vector<std::string> out;
    pb::QueueReply reply = brief_wire(*h.ctl, q);
    for (const auto& j : reply.jobs()) out.push_back(std::to_string(j.job_id()) + ":" + j.array_tasks());
    return out;
  };
  std::string a0 = std::to_string(arrays[0]), a1 = std::to_string(arrays[1]), a2 = std::to_string(arrays[2]);
  CHECK(rows() == std::vector<std::string>{a0 + ":1-50", a1 + ":1-50", a2 + ":1-50"});
  CHECK(h.ctl->array_tasks_read() == 150);
  CHECK(rows().size() == 3);
  CHECK(h.ctl->array_tasks_read() == 150);  // nothing changed: nothing read
  set_time_limit(h, a1 + "_7", "9");  // task 7 of the second array splits off its row
  std::vector<std::string> after = rows();
  CHECK(h.ctl->array_tasks_read() == 200);  // that array's 50 tasks, read again
  CHECK(after.size() == 4);
  CHECK(std::count(after.begin(), after.end(), a1 + ":1-6,8-50") == 1);
  pb::CancelRequest cancel;
  cancel.add_job_ids(arrays[2]);
  h.ctl->cancel(cancel, net::Identity{}, [](Result<pb::CancelReply>) {});  // the whole third array
  h.settle();
  std::vector<std::string> left = after;  // the same rows, the third array's gone
  left.erase(std::remove(left.begin(), left.end(), a2 + ":1-50"), left.end());
  CHECK(left.size() == 3);
  CHECK(rows() == left);
  CHECK(h.ctl->array_tasks_read() == 250);
}

TEST_CASE("squeue: a scheduling pass that changes a task's reason, with no event about its array, regroups it") {
  ControllerHarness h("n[1-2]", 4, std::make_shared<test::MemoryLog::Disk>(), Time{1000});
  REQUIRE(h.ok);
  auto agents = test::register_agents(h, {"n1", "n2"});
  REQUIRE(agents.size() == 2);
  auto whole = ControllerHarness::job_request();  // every CPU, running
  whole.mutable_spec()->set_nodes_min(2);
  whole.mutable_spec()->set_ntasks(8);
  REQUIRE(h.submit_request(whole));
  auto array = h.submit_request(ControllerHarness::job_request("", "1-5"));
  REQUIRE(array);
  pb::QueueRequest each;
  each.set_brief(true);
  pb::QueueRequest q = each;
  q.set_collapse_arrays(true);
  auto array_rows = [&] {  // the array's rows, checked against the client's grouping of every task
    pb::QueueReply collapsed = brief_wire(*h.ctl, q);
    CHECK(rows_of(collapsed, "P,t,-p") == rows_of(h.ctl->queue(each, net::Identity{}), "P,t,-p"));
    return std::count_if(collapsed.jobs().begin(), collapsed.jobs().end(),
                         [&](const pb::Job& j) { return j.array_job_id() == array->job_id(); });
  };
  CHECK(array_rows() == 2);  // its first task waits on Resources, the others behind it on Priority
  auto ahead = ControllerHarness::job_request();  // a job that goes before them (root's lower nice)
  ahead.mutable_spec()->set_nice(-1000);
  REQUIRE(h.submit_request(ahead, net::Identity{}));
  CHECK(array_rows() == 1);  // all on Priority now: one row, though no event was about them
}

TEST_CASE("squeue: only sort keys that every task of a group shows alike, or the id ascending, keep groups") {
  for (std::string_view keys : {"P,t,-p", "i", "+i", "A", "j,u,U", "D,C,l,r,F,Q,T"})
    CHECK_MESSAGE(cmd::sort_keeps_array_groups(keys), keys);
  for (std::string_view keys : {"-i", "-F", "-A", "V", "P,S", "K", "M", "e", "N", "R"})
    CHECK_MESSAGE(!cmd::sort_keeps_array_groups(keys), keys);
}

TEST_CASE("ArrayGroups: interleaved arrays and a task split off - a row per line, at its first task") {
  std::vector<Job> jobs;
  for (uint64_t id = 12; id >= 1; --id) {  // backwards; arrays 100 and 200 alternate; task 5 of 100 has its own limit
    uint64_t array = id % 2 ? 100 : 200;
    Job j = test::JobBuilder(id).array(array, static_cast<int32_t>(id)).build();
    if (id == 5) j.time_limit = 60;
    jobs.push_back(j);
  }
  jobs.push_back(test::JobBuilder(13).build());  // no array
  Job running = test::JobBuilder(14).array(100, 14).build();
  running.state = JobState::kRunning;
  jobs.push_back(running);
  ArrayGroups groups;
  std::vector<uint64_t> alone;
  for (const Job& j : jobs)
    if (!groups.add(j)) alone.push_back(j.id.value);
  CHECK(alone == std::vector<uint64_t>{13, 14});
  std::vector<std::string> rows;
  for (const ListedRow& r : groups.rows()) rows.push_back(std::to_string(r.job->id.value) + ":" + r.tasks);
  std::sort(rows.begin(), rows.end());
  CHECK(rows == std::vector<std::string>{"1:1,3,7,9,11", "2:2,4,6,8,10,12", "5:"});
}

TEST_CASE("squeue -j 12_5: the controller lists only the tasks named of an array named by its tasks alone") {
  ControllerHarness h("n[1-2]", 4, std::make_shared<test::MemoryLog::Disk>(), Time{1000});
  REQUIRE(h.ok);
  auto array = h.submit_request(ControllerHarness::job_request("", "1-20"));
  REQUIRE(array);
  uint64_t id = array->job_id();
  auto plain = h.submit_request(ControllerHarness::job_request());
  REQUIRE(plain);
  auto tasks_of = [&](const pb::QueueRequest& q) {
    pb::QueueReply r = h.ctl->queue(q, net::Identity{});
    std::vector<std::string> out;
    for (const auto& j : r.jobs())
      out.push_back(j.array_job_id() ? std::to_string(j.array_job_id()) + "_" + std::to_string(j.array_task_id())
                                     : std::to_string(j.job_id()));
    std::sort(out.begin(), out.end());
    for (uint64_t u : r.unknown_ids()) out.push_back("unknown " + std::to_string(u));
    return out;
  };
  auto named = [&](std::vector<uint64_t> ids, std::vector<int32_t> tasks) {
    pb::QueueRequest q;
    for (uint64_t i : ids) q.add_job_ids(i);
    for (int32_t t : tasks) {
      pb::NamedTask* n = q.add_named_tasks();
      n->set_array_job_id(id);
      n->set_task_id(t);
    }
    return q;
  };
  std::string a = std::to_string(id);
  CHECK(tasks_of(named({id}, {5})) == std::vector<std::string>{a + "_5"});
  CHECK(tasks_of(named({id}, {1, 20})) == std::vector<std::string>{a + "_1", a + "_20"});
  CHECK(tasks_of(named({id}, {99})).empty());  // no such task: nothing, and the array is known
  CHECK(tasks_of(named({id}, {})).size() == 20);  // the whole array
  // Another job named beside it, and an id that is no job's.
  std::vector<std::string> with_plain = tasks_of(named({id, plain->job_id(), 999999}, {3}));
  CHECK(with_plain == std::vector<std::string>{a + "_3", std::to_string(plain->job_id()), "unknown 999999"});
  // Through squeue's brief wire and the controller's own text, as squeue asks.
  pb::QueueRequest brief = named({id}, {7});
  brief.set_brief(true);
  pb::QueueReply wire = brief_wire(*h.ctl, brief);
  REQUIRE(wire.jobs_size() == 1);
  CHECK(wire.jobs(0).array_job_id() == id);
  CHECK(wire.jobs(0).array_task_id() == 7);
  brief.set_collapse_arrays(true);
  CHECK(listing_text(*h.ctl, brief, "P,t,-p").find(" " + a + "_7 ") != std::string::npos);
}

TEST_CASE("squeue -j 12_5,13: a task named by its own job id is listed beside a task named by its index") {
  ControllerHarness h("n[1-2]", 4, std::make_shared<test::MemoryLog::Disk>(), Time{1000});
  REQUIRE(h.ok);
  auto array = h.submit_request(ControllerHarness::job_request("", "1-20"));
  REQUIRE(array);
  std::string a = std::to_string(array->job_id());
  uint64_t sixth = 0;  // task 6's own job id
  pb::QueueReply all = h.ctl->queue(pb::QueueRequest{}, net::Identity{});
  for (const auto& j : all.jobs())
    if (j.array_task_id() == 6) sixth = j.job_id();
  REQUIRE(sixth != 0);
  REQUIRE(sixth != array->job_id());
  // As squeue and scontrol ask: the ids, the named tasks, then what the client keeps.
  auto listed = [&](const std::vector<std::string>& names) {
    auto args = cmd::parse_job_id_args(names);
    REQUIRE(args);
    pb::QueueRequest q;
    cmd::add_named_jobs(q, *args);
    pb::QueueReply r = h.ctl->queue(q, net::Identity{});
    cmd::keep_named_tasks(r, *args);
    std::vector<std::string> out;
    for (const auto& j : r.jobs()) out.push_back(a + "_" + std::to_string(j.array_task_id()));
    std::sort(out.begin(), out.end());
    return out;
  };
  CHECK(listed({a + "_5", std::to_string(sixth)}) == std::vector<std::string>{a + "_5", a + "_6"});
  CHECK(listed({std::to_string(sixth), a + "_5"}) == std::vector<std::string>{a + "_5", a + "_6"});
  CHECK(listed({a + "_5"}) == std::vector<std::string>{a + "_5"});
  CHECK(listed({a + "_5", a + "_7"}) == std::vector<std::string>{a + "_5", a + "_7"});
}
