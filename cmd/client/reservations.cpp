// scontrol's advance reservation commands, with Slurm 22.05's words and exit codes:
// `create reservation Key=Value..`, `update ReservationName=X Key=Value..`,
// `delete ReservationName=X`, `show reservation [NAME]` (and -o), and sinfo -T's table
// (core/advance_reservation.hpp reads and prints them). One request each; no state.
#include "cmd/client/reservations.hpp"

#include <ctime>

#include "cmd/client/job_query.hpp"
#include "cmd/client/output.hpp"
#include "cmd/commands.hpp"
#include "cmd/paths.hpp"
#include "core/advance_reservation.hpp"
#include "core/std_streams.hpp"
#include "core/units.hpp"
#include "net/convert.hpp"

namespace hq::cmd {
namespace {

// Sends a create, update or delete; the controller's answer (its errors in `errors`).
Result<pb::NodeControlReply> send(const std::string& action, const Args& settings) {
  pb::Envelope env;
  auto* req = env.mutable_reservation();
  req->set_action(action);
  for (const auto& s : settings) req->add_settings(s);
  req->set_utc_offset(local_utc_offset(static_cast<int64_t>(std::time(nullptr))));
  return call_admin(env);
}

int create(const Args& settings) {
  int64_t now = static_cast<int64_t>(std::time(nullptr));
  auto parsed = parse_resv_settings(settings, now, local_utc_offset(now));
  Status checked = parsed ? check_resv_create(*parsed) : parsed.status();
  if (!checked) return hq::cerr() << "scontrol: error: " << checked.message() << ".  No reservation created.\n", 1;
  auto reply = send("create", settings);
  if (!reply) return fail("scontrol", reply.status());
  if (reply->errors_size() == 0) return hq::cout() << "Reservation created: " << reply->done(0) << "\n", 0;
  const std::string& why = reply->errors(0);
  hq::cerr() << "Error creating the reservation: " << why << "\n";
  if (why == "Requested nodes are busy")
    hq::cout() << "Note, unless nodes are directly requested a reservation must exist in a single partition.\n"
                 "If no partition is requested the default partition is assumed.\n";
  return 1;
}

int update(const Args& settings) {
  int64_t now = static_cast<int64_t>(std::time(nullptr));
  auto parsed = parse_resv_settings(settings, now, local_utc_offset(now));
  if (parsed && !parsed->name) parsed = invalid("Reservation must be given");
  if (!parsed) return hq::cerr() << "scontrol: error: " << parsed.status().message() << ".  No reservation update.\n", 1;
  auto reply = send("update", settings);
  if (!reply) return fail("scontrol", reply.status());
  if (reply->errors_size() == 0) return hq::cout() << "Reservation updated.\n", 0;
  hq::cerr() << "Error updating the reservation: " << reply->errors(0) << "\nslurm_update error: " << reply->errors(0) << "\n";
  return 1;
}

// `delete ReservationName=X` (or Reservation=X): silent when done, as Slurm.
// `word`: "ReservationName=NAME", or "reservation" with the name in `spaced` (Slurm takes
// "delete reservation NAME" too, and names its errors by the first word).
int remove(const std::string& word, const std::string& spaced) {
  std::string name = word.find('=') == std::string::npos ? spaced : word.substr(word.find('=') + 1);
  auto reply = send("delete", {"ReservationName=" + name});
  if (!reply) return fail("scontrol", reply.status());
  if (reply->errors_size() == 0) return 0;
  hq::cerr() << "delete_reservation " << word << ": " << reply->errors(0) << "\n";
  return 1;
}

std::vector<AdvanceReservation> reservations_of(const pb::NodesReply& r) {
  std::vector<AdvanceReservation> out;
  for (const auto& p : r.reservations())
    if (auto one = net::from_pb(p)) out.push_back(std::move(one).value());
  return out;
}

}  // namespace

bool is_reservation_word(const std::string& word) {
  std::string w = to_lower(word.substr(0, word.find('=')));
  return w.size() >= 3 && std::string("reservationname").rfind(w, 0) == 0;
}

int scontrol_reservation(const Args& args) {
  const std::string& verb = args[1];
  if (verb == "create") return create(Args(args.begin() + 2, args.end()));
  if (verb == "update") return update(Args(args.begin() + 2, args.end()));
  bool spaced = args.size() > 3 && args[2].find('=') == std::string::npos;
  if (args.size() < 3 || (args[2].find('=') == std::string::npos && !spaced))
    return hq::cerr() << "scontrol: error: Invalid deletion entity: " << (args.size() > 2 ? args[2] : "") << "\n", 1;
  return remove(args[2], spaced ? args[3] : "");
}

int show_reservations(const std::vector<std::string>& names, bool oneliner) {
  auto client = connect_client();
  if (!client) return fail("scontrol", client.status());
  auto reply = query_nodes(**client);
  if (!reply) return fail("scontrol", reply.status());
  bool shown = false;
  for (const auto& p : reply->reservations()) {
    if (!names.empty() && p.name() != names[0]) continue;
    auto r = net::from_pb(p);
    if (!r) continue;
    hq::cout() << format_reservation(*r, reply->now(), p.cpus(), oneliner);
    shown = true;
  }
  if (shown) return 0;
  if (!names.empty()) return hq::cout() << "Reservation " << names[0] << " not found\n", 1;
  hq::cout() << "No reservations in the system\n";
  return 0;
}

std::string reservation_table(const pb::NodesReply& reply, bool header) {
  return format_reservation_table(reservations_of(reply), reply.now(), header);
}

}  // namespace hq::cmd
