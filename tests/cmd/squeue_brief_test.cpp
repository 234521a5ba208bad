// squeue's brief listings (QueueRequest.brief, net::kBriefFields): asked for exactly when
// every column and sort key is one the brief view carries, and then printing the same
// bytes as the full records would, over jobs of every kind (running, pending, held,
// suspended, array tasks, several partitions, no time limit).
#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <random>
#include <string_view>

#include "../core/builders.hpp"
#include "cmd/client/queue_format.hpp"
#include "cmd/controller/listing.hpp"
#include "core/array_rows.hpp"
#include "golden_cases.hpp"
#include "net/brief_wire.hpp"
#include "net/convert.hpp"
#include "net/wire_read.hpp"

using namespace hq;

namespace {

std::vector<Job> varied_jobs() {
  std::vector<Job> jobs;
  Job run = test::JobBuilder(7).name("train", 1000).tasks(4).cpus(2).nodes(2).submitted(100).build();
  run.spec.user = "alice";
  run.state = JobState::kRunning;
  run.start_time = 200;
  run.alloc = {NodeAlloc{"n1", 4}, NodeAlloc{"n2", 4}};
  jobs.push_back(run);
  Job susp = run;
  susp.id = JobId{8};
  susp.suspended = true;
  susp.suspend_time = 400;
  susp.suspended_secs = 30;
  jobs.push_back(susp);
  Job pend = test::JobBuilder(9).name("wide job", 1001).nodes(3).limit(kUnlimited).submitted(150).begin(900).build();
  pend.spec.user = "bob";
  pend.reason = JobReason::kResources;
  pend.expected_start = 700;
  pend.priority = 55;
  jobs.push_back(pend);
  Job held = test::JobBuilder(10).name("held", 1001).held().partitions({"batch", "gpu"}).build();
  held.spec.user = "bob";
  held.reason = JobReason::kJobHeldUser;
  jobs.push_back(held);
  for (int32_t task = 1; task <= 3; ++task) {
    Job t = test::JobBuilder(10 + static_cast<uint64_t>(task)).name("arr", 1000).array(11, task, 2).submitted(120).build();
    t.spec.user = "alice";
    t.reason = JobReason::kPriority;
    jobs.push_back(t);
  }
  return jobs;
}

struct Listing {
  bool asked_brief = false;
  std::string out;
};

// `out` without the clock line `squeue -l` starts with ("Wed Dec  2 03:34:34 2026"): two
// listings made a second apart are otherwise the same.
std::string without_clock_line(std::string out) {
  size_t end = out.find('\n');
  std::string_view first = std::string_view(out).substr(0, end);
  bool clock = first.size() >= 20 && std::isupper(static_cast<unsigned char>(first[0])) && first[3] == ' ' &&
               std::all_of(first.end() - 4, first.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
  if (clock && end != std::string::npos) out.erase(0, end + 1);
  return out;
}

// squeue `args` over `jobs`, the controller answering as it would (brief or full).
Listing list(const std::vector<std::string>& args, bool honour_brief, const std::vector<Job>& jobs = varied_jobs()) {
  Listing l;
  pb::QueueReply r;
  auto captured = test::capture_output([&] {
    return cmd::queue_with(args, [&](const pb::QueueRequest& q) -> Result<cmd::QueueAnswer> {
      l.asked_brief = q.brief();
      r.Clear();
      r.set_now(1000);
      for (const Job& j : jobs) {
        if (q.brief() && honour_brief) net::to_pb_brief(j, *r.add_jobs());
        else net::to_pb(j, false, *r.add_jobs());
      }
      return cmd::QueueAnswer{&r, {}, {}};
    });
  });
  l.out = without_clock_line(captured.out);
  return l;
}

// A brief QueueReply of `jobs` for `q` appended to `body`, as the controller writes it
// (an array's pending tasks grouped where asked, unless not `controller_groups`).
void append_records(const pb::QueueRequest& q, const std::vector<Job>& jobs, bool controller_groups, std::string& body) {
  ArrayGroups groups;
  bool grouped = controller_groups && q.collapse_arrays();
  for (const Job& j : jobs)
    if (!grouped || !groups.add(j)) net::append_brief_job_entry(j, body);
  if (grouped)
    for (const ListedRow& row : groups.rows()) net::append_brief_job_entry(*row.job, body, row.tasks);
  net::append_queue_reply_tail(1000, false, {}, body);
}

// The same as run_queue meets it: a brief listing's records written by the controller's
// own code (net/brief_wire, an array's pending tasks grouped where asked, as
// Controller::queue_brief_wire does) and split off the frame unparsed (net/wire_read).
Listing list_as_sent(const std::vector<std::string>& args, const std::vector<Job>& jobs, bool controller_groups = true) {
  Listing l;
  std::string frame;
  net::UnparsedJobs parts;
  auto captured = test::capture_output([&] {
    return cmd::queue_with(args, [&](const pb::QueueRequest& q) -> Result<cmd::QueueAnswer> {
      l.asked_brief = q.brief();
      std::string body;
      append_records(q, jobs, controller_groups, body);
      frame = net::envelope_with_queue_reply(5, body);
      auto split = net::split_queue_reply(frame);
      if (!split) return split.status();
      parts = std::move(*split);
      return cmd::QueueAnswer{parts.rest.mutable_queue_reply(), parts.jobs, {}};
    });
  });
  l.out = without_clock_line(captured.out);
  return l;
}

// The same where the controller makes the text itself (QueueRequest.render,
// Controller::queue_listing: ListingRenderer over its rows, grouped as it groups them),
// the records as list_as_sent sends them where it cannot. `rendered`: whether it did.
Listing list_rendered(const std::vector<std::string>& args, const std::vector<Job>& jobs, bool* rendered = nullptr) {
  Listing l;
  std::string buf;
  net::UnparsedJobs parts;
  auto captured = test::capture_output([&] {
    return cmd::queue_with(args, [&](const pb::QueueRequest& q) -> Result<cmd::QueueAnswer> {
      l.asked_brief = q.brief();
      buf.assign(net::kQueueReplyHeadRoom, '\0');
      std::optional<size_t> reply_from;
      if (q.render().wanted()) {
        cmd::ListingRenderer listing(q.render(), 1000, buf, 4 << 20, jobs.size());
        auto add = [&](const Job& j, std::string_view tasks) { return listing.add(j, tasks); };
        bool ok = listing.usable();
        if (ok && q.collapse_arrays()) {
          ok = add_grouped_rows([&](auto&& visit) { for (const Job& j : jobs) if (!visit(j)) break; }, add);
        } else if (ok) {
          for (const Job& j : jobs) if (!(ok = add(j, {}))) break;
        }
        if (ok) reply_from = listing.finish({});
        else if (listing.usable()) listing.abandon();
      }
      if (rendered) *rendered = reply_from.has_value();
      if (!reply_from) append_records(q, jobs, true, buf);  // the records, as the controller sends them then
      size_t from = net::frame_queue_reply_in_place(5, buf, reply_from.value_or(net::kQueueReplyHeadRoom));
      auto split = net::split_queue_reply(std::string_view(buf).substr(from + 4));  // past the frame's length
      if (!split) return split.status();
      parts = std::move(*split);
      return cmd::QueueAnswer{parts.rest.mutable_queue_reply(), parts.jobs, parts.listing};
    });
  });
  l.out = without_clock_line(captured.out);
  return l;
}

// A queue of `n` jobs of every kind, in id order as the controller lists them: pending
// (some held, some in several partitions, some waiting to begin), running, suspended, and
// arrays whose pending tasks mostly show the same line (a few differ in their time limit).
std::vector<Job> random_queue(std::mt19937& rng, int n) {
  auto pick = [&](int k) { return static_cast<int>(rng() % static_cast<unsigned>(k)); };
  const char* users[] = {"alice", "bob", "carol"};
  const char* parts[] = {"batch", "gpu", "debug"};
  std::vector<Job> jobs;
  uint64_t id = 1;
  while (static_cast<int>(jobs.size()) < n) {
    int tasks = pick(3) == 0 ? 1 + pick(6) : 0;
    uint64_t array = tasks ? id : 0;
    std::string user = users[pick(3)], part = parts[pick(3)], name = "j" + std::to_string(pick(4));
    int kind = pick(5), ntasks = 1 + pick(4), cpus = 1 + pick(2), nodes = 1 + pick(2), submitted = 100 + pick(50);
    Duration limit = pick(4) == 0 ? kUnlimited : 60 * (1 + pick(3));
    auto uid = 1000 + static_cast<uint32_t>(pick(3));
    JobReason reason = kind == 1 ? JobReason::kJobHeldUser : pick(2) ? JobReason::kPriority : JobReason::kResources;
    for (int t = 0; t < std::max(tasks, 1); ++t, ++id) {
      test::JobBuilder b(id);
      b.name(name, uid).tasks(ntasks).cpus(cpus).nodes(nodes).submitted(submitted);
      b.limit(pick(6) == 0 && limit != kUnlimited ? limit + 60 : limit);
      if (array) b.array(array, t, pick(2) * 3);
      if (kind == 1) b.held();
      if (kind == 2 && !array) b.partitions({part, "gpu"});
      else b.partition(part);
      if (kind == 3) b.begin(2000);
      Job j = b.build();
      j.spec.user = user;
      j.priority = array && t > 0 ? jobs.back().priority : 10 * pick(3);
      j.reason = reason;
      if (kind == 4 && pick(2)) {
        j.state = JobState::kRunning;
        j.reason = JobReason::kNone;
        j.start_time = 500 + pick(400);
        j.alloc = {NodeAlloc{"n" + std::to_string(1 + pick(8)), 2}};
        j.suspended = pick(4) == 0;
        if (j.suspended) j.suspend_time = 950;
      }
      jobs.push_back(std::move(j));
    }
  }
  return jobs;
}

// Whether the controller can make squeue `args`' text over any queue: where it groups the
// arrays' tasks (sort keys they show alike), or -r shows each on its own.
bool renders_always(const std::vector<std::string>& args) {
  bool per_task = std::find(args.begin(), args.end(), "-r") != args.end();
  auto sort = std::find(args.begin(), args.end(), "-S");
  return per_task || sort == args.end() || cmd::sort_keeps_array_groups(*(sort + 1));
}

}  // namespace

TEST_CASE("squeue: a listing printed as its records are parsed shows what the parsed reply shows") {
  const std::vector<std::vector<std::string>> lines = {
      {"squeue"},
      {"squeue", "-l"},
      {"squeue", "-h"},
      {"squeue", "-r"},
      {"squeue", "-S", "u,-i"},
      {"squeue", "-S", "V,i"},  // a key tasks of a group may differ in: the client groups them
      {"squeue", "-S", "-P,j,-l", "-o", "%i %P %j %u %l %K %Q"},
      {"squeue", "-S", "-C,u,-M,l,V", "-o", "%i %C %u"},
      {"squeue", "-o", "%.18i %A %F %K %P %j %u %U %t %T %M %D %R %N %l %L %C %r %S %V %e %Q"},
      {"squeue", "-O", "JobID,Partition,Name,UserName,State,TimeUsed,NumNodes,ReasonList"},
  };
  std::mt19937 rng(17);
  for (int round = 0; round < 20; ++round) {
    std::vector<Job> jobs = random_queue(rng, 1 + round * 7);
    for (const auto& args : lines) {
      CAPTURE(round);
      CAPTURE(args.back());
      Listing sent = list_as_sent(args, jobs), parsed = list(args, true, jobs);
      CHECK(sent.asked_brief);
      CHECK(sent.out == parsed.out);
      // A controller that did not group them (one that predates it): the client groups.
      CHECK(list_as_sent(args, jobs, false).out == parsed.out);
      // The controller makes the text: the same, wherever it can make it.
      bool rendered = false;
      CHECK(list_rendered(args, jobs, &rendered).out == parsed.out);
      if (renders_always(args)) CHECK(rendered);  // else where no two tasks share a row
    }
  }
}

TEST_CASE("squeue: the controller's text goes back to records where it cannot be made there") {
  std::mt19937 rng(5);
  std::vector<Job> jobs = random_queue(rng, 40);
  pb::ListingRender render;
  render.set_wanted(true);
  render.set_header(true);
  std::string buf = "head";
  SUBCASE("more text than a page") {
    render.set_one_per_task(true);  // nothing else to stop it
    cmd::ListingRenderer listing(render, 1000, buf, 1000, 14);  // 14 lines of 68 bytes at least could fit
    REQUIRE(listing.usable());
    bool all = true;
    for (const Job& j : jobs) if (!(all = listing.add(j, {}))) break;
    CHECK(!all);
    listing.abandon();
    CHECK(buf == "head");
  }
  SUBCASE("an array's pending tasks that show one row, not grouped") {
    cmd::ListingRenderer listing(render, 1000, buf, 4 << 20, jobs.size());
    bool all = true;
    for (const Job& j : varied_jobs()) if (!(all = listing.add(j, {}))) break;
    CHECK(!all);  // tasks 11_1 and 11_2 show the same line
    render.set_one_per_task(true);  // -r: one line each
    std::string other;
    cmd::ListingRenderer each(render, 1000, other, 4 << 20, 10);
    for (const Job& j : varied_jobs()) CHECK(each.add(j, {}));
  }
  SUBCASE("a column or key that a brief record does not carry") {
    render.set_format("%i %a");
    CHECK(!cmd::ListingRenderer(render, 1000, buf, 4 << 20, 1).usable());
    render.set_format("%i");
    render.set_sort("Z");
    CHECK(!cmd::ListingRenderer(render, 1000, buf, 4 << 20, 1).usable());
    CHECK(buf == "head");
  }
  SUBCASE("more columns or sort keys than squeue's options ever hold") {
    std::string many;
    for (int i = 0; i < 200; ++i) many += "%i";
    render.set_format(many);  // 200 columns
    CHECK(!cmd::ListingRenderer(render, 1000, buf, 4 << 20, 1).usable());
    render.set_format(many.substr(0, 2 * 100));
    CHECK(cmd::ListingRenderer(render, 1000, buf, 4 << 20, 1).usable());
    std::string keys;
    for (int i = 0; i < 40; ++i) keys += "P,";
    render.set_sort(keys);  // 80 bytes of keys, each a pass over the jobs
    CHECK(!cmd::ListingRenderer(render, 1000, buf, 4 << 20, 1).usable());
  }
  SUBCASE("a queue whose lines could not fit a page is not begun") {
    CHECK(!cmd::ListingRenderer(render, 1000, buf, 4 << 20, 100000).usable());  // 100,000 lines of 70 bytes at least
    CHECK(cmd::ListingRenderer(render, 1000, buf, 4 << 20, 50000).usable());
  }
  SUBCASE("lines wider than the controller makes") {
    std::string wide;
    for (int i = 0; i < 7; ++i) wide += "%.9999i ";
    render.set_format(wide);  // 70,000 bytes a line
    CHECK(!cmd::ListingRenderer(render, 1000, buf, 4 << 20, 1).usable());
    render.set_format(wide.substr(0, 6 * 8));  // 60,000: made
    CHECK(cmd::ListingRenderer(render, 1000, buf, 4 << 20, 1).usable());
  }
}

TEST_CASE("squeue: an undecodable job record is an error, and nothing of the listing is printed") {
  pb::QueueReply reply;
  reply.set_now(1000);
  pb::Job good;
  good.set_job_id(3);
  std::string records[] = {good.SerializeAsString(), std::string("\x0a\xff", 2)};  // a length past the end
  for (bool streamed : {true, false}) {
    auto run = test::capture_output([&] {
      std::vector<std::string> args = {"squeue"};
      if (!streamed) args = {"squeue", "-j", "3_1"};  // a task named: every record parsed first
      return cmd::queue_with(args, [&](const pb::QueueRequest&) -> Result<cmd::QueueAnswer> {
        return cmd::QueueAnswer{&reply, {records[0], records[1]}, {}};
      });
    });
    CAPTURE(streamed);
    CHECK(run.rc == 1);
    CHECK(run.out.find("undecodable job record") != std::string::npos);
    CHECK(run.out.find("JOBID") == std::string::npos);
  }
}


TEST_CASE("squeue: brief listings print what full records print, and are asked for only where they suffice") {
  const std::vector<std::vector<std::string>> brief_lines = {
      {"squeue"},
      {"squeue", "-l"},
      {"squeue", "-r"},
      {"squeue", "-o", "%.18i %A %F %K %P %j %u %U %t %T %M %D %R %N %l %L %C %r %S %V %e %Q"},
      {"squeue", "-S", "-C,u,-M,l,V", "-o", "%i %C %u"},
      {"squeue", "-O", "JobID,Partition,Name,UserName,State,TimeUsed,NumNodes,ReasonList"},
  };
  for (const auto& args : brief_lines) {
    CAPTURE(args.back());
    Listing brief = list(args, true), full = list(args, false);
    CHECK(brief.asked_brief);
    CHECK(brief.out == full.out);
    CHECK(brief.out.find("alice") != std::string::npos);
  }
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"squeue", "-o", "%i %a"}, {"squeue", "-o", "%i %Z"}, {"squeue", "-S", "a"}, {"squeue", "--json"}}) {
    CAPTURE(args.back());
    CHECK(!list(args, true).asked_brief);
  }
}

TEST_CASE("squeue: a cell's view is the text squeue_value gives, for every field over jobs of every kind") {
  std::string letters = "iAFKPjuUtTMDRNlLCrSVeQaZomcEyBnxYkqvwfgG";
  for (char c : {kSqNumTasks, kSqExitCode, kSqStdOut, kSqStdErr, kSqStdIn, kSqTimeMin, kSqDeadline, kSqCpusPerTask,
                 kSqRestarts, kSqReqSwitch, kSqWait4Switch})
    letters += c;
  std::string scratch = "left over from another cell";
  for (const Job& j : varied_jobs()) {
    for (bool brief : {false, true}) {
      pb::Job pj;
      if (brief) net::to_pb_brief(j, pj);
      else net::to_pb(j, false, pj);
      for (char f : letters)
        CHECK_MESSAGE(std::string(cmd::squeue_cell(pj, f, 1000, scratch)) == cmd::squeue_value(pj, f, 1000),
                      "job " << j.id.value << " field " << f);
    }
  }
}

TEST_CASE("squeue with no arguments, its options not parsed, asks and prints what the option table's defaults give") {
  auto run = [](const std::vector<std::string>& args) {
    pb::QueueRequest asked;
    pb::QueueReply r;
    auto out = test::capture_output([&] {
      return cmd::queue_with(args, [&](const pb::QueueRequest& q) -> Result<cmd::QueueAnswer> {
        asked = q;
        r.Clear();
        r.set_now(1000);
        for (const Job& j : varied_jobs()) net::to_pb_brief(j, *r.add_jobs());
        return cmd::QueueAnswer{&r, {}, {}};
      });
    });
    return std::make_pair(asked.SerializeAsString(), out.out);
  };
  auto plain = run({"squeue"});
  CHECK(plain == run({"squeue", "--local"}));  // a flag taken and ignored: the table is built and parsed
  CHECK(plain.second.find("JOBID") != std::string::npos);
}
