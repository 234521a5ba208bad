// Advance reservations: scontrol's settings, what a new or changed one may hold, the
// scheduler keeping other jobs off its nodes and running its own there, and the texts of
// `scontrol show reservation` and `sinfo -T` (compared with Slurm 22.05's on the bench).
#include <doctest/doctest.h>

#include "builders.hpp"
#include "core/advance_reservation.hpp"
#include "core/scheduler.hpp"

using namespace hq;
using hq::test::cluster;
using hq::test::JobBuilder;
using hq::test::start;

namespace {
constexpr Time kNow = 1'800'000'000;  // 2027-01-15T08:00:00Z

ResvSettings settings(const std::vector<std::string>& words) {
  auto s = parse_resv_settings(words, kNow, 0);
  REQUIRE_MESSAGE(s.is_ok(), s.status().message());
  return *s;
}
std::string parse_error(const std::vector<std::string>& words) {
  auto s = parse_resv_settings(words, kNow, 0);
  return s ? "" : s.status().message();
}
Result<AdvanceReservation> create(const ClusterState& s, const std::vector<std::string>& words, uint64_t id = 1) {
  return create_reservation(s, settings(words), kNow, id);
}
void add(ClusterState& s, const AdvanceReservation& r) { REQUIRE(apply(s, ReservationChanged{kNow, r, false})); }
const PendingInfo* info(const Plan& p, uint64_t id) {
  for (const auto& i : p.pending)
    if (i.job.value == id) return &i;
  return nullptr;
}
std::string fate(const Plan& p, uint64_t id) {
  for (const auto& st : p.starts)
    if (st.job.value == id) return "started on " + alloc_hostlist(st.alloc);
  return info(p, id) ? std::string(to_string(info(p, id)->reason)) : "not looked at";
}
}  // namespace

TEST_CASE("reservation settings: Slurm's keys, abbreviations and errors") {
  ResvSettings s = settings({"reservation", "Reserv=maint1", "starttime=now+1hour", "dur=2:00:00", "NODES=n[1-2]",
                             "users=alice,bob", "acc=phys", "part=debug", "flags=maint,Ignore_Jobs"});
  CHECK(*s.name == "maint1");
  CHECK(*s.start == kNow + 3600);
  CHECK(*s.duration == 7200);
  CHECK(*s.nodes == "n[1-2]");
  CHECK(*s.users == std::vector<std::string>{"alice", "bob"});
  CHECK(*s.accounts == std::vector<std::string>{"phys"});
  CHECK(*s.partition == "debug");
  CHECK(*s.flags == (kResvMaint | kResvIgnoreJobs));
  CHECK(*settings({"NodeCount=3"}).node_count == 3);
  CHECK(*settings({"Duration=UNLIMITED"}).duration == kUnlimited);
  CHECK(*settings({"Duration=0:30"}).duration == 60);  // whole minutes, as Slurm's time_str2mins
  CHECK(*settings({"EndTime=2027-01-15T10:00:00"}).end == kNow + 7200);
  CHECK(parse_error({"foo=bar"}) == "Unknown parameter foo=bar");
  CHECK(parse_error({"starttime=bogus"}) == "Invalid start time starttime=bogus");
  CHECK(parse_error({"flags=bogus"}) == "Error parsing flags bogus");
  CHECK(parse_error({"NodeCnt=1,2"}) == "Using a comma separated array for NodeCnt is no longer valid");
  CHECK(parse_error({"Duration=-5"}) == "Invalid duration Duration=-5");
  CHECK(parse_error({"nodes"}) == "Misformatted parameter 'nodes', most options have a parameter after '='");
  // What hq does not act on is refused by name, never taken silently.
  CHECK(parse_error({"flags=daily"}).find("DAILY is not supported by hq") != std::string::npos);
  CHECK(parse_error({"CoreCnt=4"}).find("CoreCnt= is not supported by hq") != std::string::npos);
  CHECK(parse_error({"Users+=bob"}).find("not supported") != std::string::npos);
  // scontrol's own checks before it asks.
  CHECK(check_resv_create(settings({"nodes=n1", "duration=60"})).message() ==
        "Either Users/Groups and/or Accounts must be specified");
  CHECK(check_resv_create(settings({"users=root", "duration=60"})).message() ==
        "CoreCnt, Nodes, NodeCnt, BurstBuffer, Licenses or Watts must be specified");
  CHECK(check_resv_create(settings({"users=root", "nodes=n1", "starttime=now+2hours", "endtime=now+1hour"})).message() ==
        "Start time cannot be after end time");
}

TEST_CASE("a new reservation: its name, nodes and window - busy nodes and overlaps refused as slurmctld does") {
  auto s = cluster("n[1-3]", 4);
  auto r = create(s, {"starttime=now", "duration=60", "nodes=n[2-3]", "users=root"}, 7);
  REQUIRE(r.is_ok());
  CHECK(r->name == "root_7");  // made up from the first user (or account) and the id
  CHECK(r->start == kNow);
  CHECK(r->end == kNow + 3600);
  CHECK(r->nodes == std::vector<std::string>{"n2", "n3"});
  CHECK(r->flags == kResvSpecNodes);
  CHECK(create(s, {"nodes=ALL", "duration=60", "accounts=phys", "users=root"})->name == "phys_1");
  CHECK(create(s, {"nodes=ALL", "duration=60", "users=root"})->nodes.size() == 3);
  CHECK(create(s, {"nodes=n9", "duration=60", "users=root"}).status().message() == "Invalid node name specified");
  add(s, *r);
  CHECK(create(s, {"ReservationName=root_7", "nodes=n1", "duration=60", "users=root"}).status().message() ==
        "Duplicate reservation name");
  // Another reservation's nodes over its window: busy, unless either may overlap.
  CHECK(create(s, {"nodes=n3", "duration=60", "users=root"}).status().message() == "Requested nodes are busy");
  CHECK(create(s, {"nodes=n3", "starttime=now+1hour", "duration=60", "users=root"}).is_ok());  // after it
  CHECK(create(s, {"nodes=n3", "duration=60", "users=root", "flags=overlap"}).is_ok());
  // NodeCnt takes free nodes of the partition, in order.
  CHECK(create(s, {"nodecnt=1", "duration=60", "users=root"})->nodes == std::vector<std::string>{"n1"});
  CHECK(create(s, {"nodecnt=2", "duration=60", "users=root"}).status().message() == "Requested nodes are busy");
  // A running job there past the start: busy, unless IGNORE_JOBS; one that ends before: free.
  start(s, 50, {"n1"}, 1, kNow);
  s.jobs.at(JobId{50}).time_limit = 1800;
  CHECK(create(s, {"nodes=n1", "duration=60", "users=root"}).status().message() == "Requested nodes are busy");
  CHECK(create(s, {"nodes=n1", "duration=60", "users=root", "flags=ignore_jobs"}).is_ok());
  CHECK(create(s, {"nodes=n1", "starttime=now+1hour", "duration=60", "users=root"}).is_ok());
}

TEST_CASE("a changed reservation is checked as a new one - its own jobs do not make it busy") {
  auto s = cluster("n[1-2]", 4);
  add(s, *create(s, {"ReservationName=a", "nodes=n1", "duration=60", "users=root"}));
  add(s, *create(s, {"ReservationName=b", "nodes=n2", "starttime=now+2hours", "duration=60", "users=root"}));
  apply(s, JobSubmitted{JobBuilder(60).reservation("a").build()});
  apply(s, JobStarted{JobId{60}, kNow, {{"n1", 1, 100, 1, {}}}, ""});
  const AdvanceReservation& a = s.reservations.at("a");
  auto longer = update_reservation(s, a, settings({"ReservationName=a", "Duration=120"}), kNow);
  REQUIRE(longer.is_ok());
  CHECK(longer->end == kNow + 7200);
  CHECK(update_reservation(s, a, settings({"ReservationName=a", "Nodes=n[1-2]"}), kNow).is_ok());  // over before b
  CHECK(update_reservation(s, a, settings({"ReservationName=a", "Nodes=n[1-2]", "Duration=180"}), kNow).status().message() ==
        "Requested nodes are busy");  // b holds n2 from +2h
  CHECK(reservation_in_use(s, "a"));
  CHECK_FALSE(reservation_in_use(s, "b"));
}

TEST_CASE("the scheduler keeps other jobs off reserved nodes over the window and runs a reservation's jobs only there") {
  auto s = cluster("n[1-2]", 2);
  add(s, *create(s, {"ReservationName=r1", "nodes=n1", "duration=60", "users=root"}));
  apply(s, JobSubmitted{JobBuilder(1).nodes(2).limit(600).build()});          // needs n1: after r1
  apply(s, JobSubmitted{JobBuilder(2).limit(600).build()});                   // fits on n2
  apply(s, JobSubmitted{JobBuilder(3).limit(600).reservation("r1").build()});  // only on n1
  apply(s, JobSubmitted{JobBuilder(4).nodes(2).reservation("r1").build()});    // more nodes than r1 holds
  Plan p = Scheduler().schedule(s, kNow);
  CHECK(fate(p, 2) == "started on n2");
  CHECK(fate(p, 3) == "started on n1");
  CHECK(fate(p, 1) == "Resources");
  CHECK(info(p, 1)->expected_start >= kNow + 3600);  // once r1 is over
  CHECK(fate(p, 4) == "BadConstraints");
  // Without the reservation job 1 would have the nodes now; job 3 keeps to n1 even when n2 is free.
  auto t = cluster("n[1-2]", 2);
  add(t, *create(t, {"ReservationName=r1", "nodes=n1", "duration=60", "users=root"}));
  apply(t, JobSubmitted{JobBuilder(3).cpus(2).limit(600).reservation("r1").build()});
  apply(t, JobSubmitted{JobBuilder(5).cpus(2).limit(600).reservation("r1").build()});
  Plan q = Scheduler().schedule(t, kNow);
  CHECK(fate(q, 3) == "started on n1");
  CHECK(fate(q, 5) == "Resources");
}

TEST_CASE("a reservation that has not begun: its jobs wait for it - others must end before it - every node reserved has Slurm's reasons") {
  auto s = cluster("n[1-2]", 2);
  add(s, *create(s, {"ReservationName=later", "nodes=n[1-2]", "starttime=now+1hour", "duration=60", "users=root",
                     "flags=maint"}));
  apply(s, JobSubmitted{JobBuilder(1).reservation("later").build()});
  apply(s, JobSubmitted{JobBuilder(2).limit(1800).build()});            // ends before it: runs now
  apply(s, JobSubmitted{JobBuilder(3).limit(7200).build()});            // would run into it
  apply(s, JobSubmitted{JobBuilder(4).limit(kUnlimited).build()});
  Plan p = Scheduler().schedule(s, kNow);
  CHECK(fate(p, 1) == "Reservation");
  CHECK(info(p, 1)->expected_start == kNow + 3600);
  CHECK(fate(p, 2).rfind("started on", 0) == 0);
  CHECK(fate(p, 3) == "ReqNodeNotAvail, Reserved for maintenance");
  CHECK(fate(p, 4) == "ReqNodeNotAvail, Reserved for maintenance");
  // Not MAINT: "May be reserved for other job"; one node left free: the plain reasons.
  auto t = cluster("n[1-2]", 1);
  add(t, *create(t, {"ReservationName=now", "nodes=n[1-2]", "duration=60", "users=root"}));
  apply(t, JobSubmitted{JobBuilder(7).limit(600).build()});
  CHECK(fate(Scheduler().schedule(t, kNow), 7) == "ReqNodeNotAvail, May be reserved for other job");
  auto u = cluster("n[1-3]", 1);
  add(u, *create(u, {"ReservationName=now", "nodes=n[1-2]", "duration=60", "users=root"}));
  start(u, 50, {"n3"}, 1, kNow);
  apply(u, JobSubmitted{JobBuilder(8).limit(600).build()});
  CHECK(fate(Scheduler().schedule(u, kNow), 8) == "Resources");
  // Once it is over, the same jobs start: the scheduler needs no other signal.
  CHECK(fate(Scheduler().schedule(t, kNow + 3600), 7).rfind("started on", 0) == 0);
}

TEST_CASE("scontrol show reservation and sinfo -T print what Slurm 22.05 prints") {
  // Captured from Slurm 22.05.8 on the slurm-bench (2026-11-24), nodes n1, n2 of 2 CPUs each.
  AdvanceReservation a{"root_1", 1, 1795562655, 1795562655 + 3600, {"n1"}, {"root"}, {}, "", kResvSpecNodes};
  CHECK(format_reservation(a, 1795562655 + 10, 2, false) ==
        "ReservationName=root_1 StartTime=2026-11-24T23:24:15 EndTime=2026-11-25T00:24:15 Duration=01:00:00\n"
        "   Nodes=n1 NodeCnt=1 CoreCnt=2 Features=(null) PartitionName=(null) Flags=SPEC_NODES\n"
        "   TRES=cpu=2\n"
        "   Users=root Groups=(null) Accounts=(null) Licenses=(null) State=ACTIVE BurstBuffer=(null) Watts=n/a\n"
        "   MaxStartDelay=(null)\n\n");
  AdvanceReservation b{"root_5", 5, 1796119200, 1796119200 + 86400, {"n1", "n2"}, {"root", "nobody"}, {"root"}, "bench",
                       kResvMaint | kResvIgnoreJobs | kResvSpecNodes};
  CHECK(format_reservation(b, 1795562655, 4, true) ==
        "ReservationName=root_5 StartTime=2026-12-01T10:00:00 EndTime=2026-12-02T10:00:00 Duration=1-00:00:00 "
        "Nodes=n[1-2] NodeCnt=2 CoreCnt=4 Features=(null) PartitionName=bench Flags=MAINT,IGNORE_JOBS,SPEC_NODES "
        "TRES=cpu=4 Users=root,nobody Groups=(null) Accounts=root Licenses=(null) State=INACTIVE BurstBuffer=(null) "
        "Watts=n/a MaxStartDelay=(null)\n");
  AdvanceReservation m{"maint1", 2, 1795566255, 1795566255 + 7200, {"n1", "n2"}, {"root"}, {}, "", 0};
  CHECK(format_reservation_table({a, m}, 1795562655 + 10, true) ==
        "RESV_NAME     STATE           START_TIME             END_TIME     DURATION  NODELIST\n"
        "root_1       ACTIVE  2026-11-24T23:24:15  2026-11-25T00:24:15     01:00:00  n1\n"
        "maint1     INACTIVE  2026-11-25T00:24:15  2026-11-25T02:24:15     02:00:00  n[1-2]\n");
  CHECK(format_reservation_table({b}, 1795562655, true) ==
        "RESV_NAME     STATE           START_TIME             END_TIME     DURATION  NODELIST\n"
        "root_5     INACTIVE  2026-12-01T10:00:00  2026-12-02T10:00:00   1-00:00:00  n[1-2]\n");
  CHECK(format_reservation_table({}, 0, true) == "No reservations in the system\n");
}
