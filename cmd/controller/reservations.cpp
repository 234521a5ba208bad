// Controller side of advance reservations: `scontrol create|update|delete reservation`
// (administrators), the reservations and the nodes they hold in NodesReply (scontrol show
// reservation, sinfo -T, sinfo's resv/maint states), and their end: a reservation whose
// window is over goes, and jobs still running in it stop as at their time limit (Slurm's
// ResvOverRun=0). Every change is journaled. Runs on the controller's event-loop thread.
#include <algorithm>

#include "cmd/controller/controller.hpp"
#include "cmd/users.hpp"
#include "core/advance_reservation.hpp"
#include "core/hostlist.hpp"
#include "net/convert.hpp"
#include "net/log.hpp"

namespace hq::cmd {
namespace {

// The settings' users that /etc/passwd does not know ("" none).
std::string unknown_user(const ResvSettings& s) {
  if (!s.users) return "";
  for (const std::string& u : *s.users)
    if (!user_of(u)) return u;
  return "";
}

// ReservationName= among the words (update, delete), or "".
std::string named(const ResvSettings& s) { return s.name.value_or(""); }

}  // namespace

void Controller::reservation_request(const pb::ReservationRequest& req, const net::Identity& who,
                                     std::function<void(pb::NodeControlReply)> reply) {
  pb::NodeControlReply out;
  auto fail = [&](const std::string& why) {
    out.add_errors(why);
    reply(std::move(out));
  };
  if (!is_admin(who)) return fail("Invalid user id");  // slurmctld's answer to a user who is not an operator
  const std::string& action = req.action();
  auto settings = parse_resv_settings({req.settings().begin(), req.settings().end()}, now(), req.utc_offset());
  if (!settings) return fail(settings.status().message());
  if (std::string user = unknown_user(*settings); !user.empty()) return fail("Invalid user id");
  Result<AdvanceReservation> r = invalid("unknown reservation action '" + action + "'");
  auto current = state_.reservations.find(named(*settings));
  bool deleted = action == "delete";
  if (action == "create") {
    r = create_reservation(state_, *settings, now(), state_.next_resv_id);
  } else if (current == state_.reservations.end()) {
    if (action == "update" || deleted) return fail("Requested reservation is invalid");
  } else if (action == "update") {
    r = update_reservation(state_, current->second, *settings, now());
  } else if (deleted) {
    if (reservation_in_use(state_, current->first)) return fail("Requested reservation is in use");
    r = current->second;
  }
  if (!r) return fail(r.status().message());
  log::info("reservation " + r->name + ": " + action + "d by uid " + std::to_string(who.uid) + " (nodes " +
            compress_hostlist(r->nodes, HostlistOrder::kSorted) + ")");
  out.add_done(r->name);
  record(ReservationChanged{now(), std::move(r).value(), deleted});
  when_durable([reply, out = std::move(out)](const Status&) { reply(out); });
  request_schedule();
}

void Controller::end_reservations() {
  Time t = now();
  std::vector<const AdvanceReservation*> over;
  for (const auto& [name, r] : state_.reservations)
    if (r.end <= t) over.push_back(&r);
  for (const AdvanceReservation* r : over) {
    std::vector<JobId> allocations;
    for_each_job_in(state_, state_.running, [&](const Job& job) {
      if (job.spec.extra->reservation != r->name) return;
      log::info("Reservation ended for JobId=" + std::to_string(job.id.value) + " (" + r->name + ")");
      if (job.spec.is_batch()) send_kill(job, KillReason::kTimeout);
      else allocations.push_back(job.id);
    });
    for (JobId id : allocations) record(JobEnded{id, t, JobState::kTimeout, 0, 0, JobReason::kTimeLimit});
    log::info("reservation " + r->name + " ended");
    AdvanceReservation gone = *r;
    record(ReservationChanged{t, std::move(gone), true});
  }
  if (!over.empty()) request_schedule();
}

void Controller::add_reservations(pb::NodesReply& out) const {
  if (state_.reservations.empty()) return;
  Time t = now();
  std::vector<const AdvanceReservation*> by_id;  // in the order they were made, as Slurm lists them
  for (const auto& [name, r] : state_.reservations) by_id.push_back(&r);
  std::sort(by_id.begin(), by_id.end(), [](auto* a, auto* b) { return a->id < b->id; });
  for (const AdvanceReservation* rp : by_id) {
    const AdvanceReservation& r = *rp;
    pb::AdvanceReservation* p = out.add_reservations();
    *p = net::to_pb(r);
    int64_t cpus = 0;
    for (const std::string& node : r.nodes)
      if (auto it = state_.nodes.find(node); it != state_.nodes.end()) cpus += it->second.cpus;
    p->set_cpus(cpus);
  }
  for (pb::Node& n : *out.mutable_nodes()) {
    for (const auto& [name, r] : state_.reservations) {
      if (!r.active(t) || !r.holds(n.name())) continue;
      n.set_reservation(name);
      n.set_maint(n.maint() || (r.flags & kResvMaint));
    }
  }
}

}  // namespace hq::cmd
