// scontrol reconfigure: the controller reads its config file again and takes what may
// change while it runs (the scheduler's settings and weights, timeouts, kill wait,
// MinJobAge, MaxArraySize, mail, operators, private_jobs, root jobs, return to service,
// dynamic nodes, [agents], which agents take at their next registration). Nodes,
// partitions, where it listens, its state and keys are read when it starts: a file that
// changes them is refused whole, naming them, and nothing changes. Runs on the
// controller's event loop.
#include "cmd/controller/controller.hpp"
#include "net/log.hpp"

namespace hq::cmd {

pb::NodeControlReply Controller::reconfigure(const net::Identity& who) {
  pb::NodeControlReply out;
  if (!is_admin(who)) {
    out.add_errors("Invalid user id");  // Slurm's answer to others
    return out;
  }
  if (!config_source_) {
    out.add_errors("this controller has no config file to read again");
    return out;
  }
  auto fresh = config_source_();
  if (!fresh) {
    out.add_errors("the config file is not valid: " + fresh.status().message() + "; nothing changed");
    return out;
  }
  std::vector<std::string> fixed = settings_needing_restart(config_, *fresh);
  if (!fixed.empty()) {
    std::string list;
    for (const auto& f : fixed) list += (list.empty() ? "" : ", ") + f;
    out.add_errors("the config file changes what is read only at start (" + list +
                   "): restart the controller to apply it; nothing changed");
    return out;
  }
  // Holders granted under another InactiveLimit learn the new one at their next keepalive.
  if (fresh->inactive_limit != config_.inactive_limit) holders_heard_floor_ = now() + holder_keepalive();
  config_ = std::move(fresh).value();
  touch_listed(state_);  // private_jobs and the partitions a listing reads may have changed
  scheduler_ = Scheduler(config_.scheduler, acct_policy_);
  log::info("reconfigured from the config file (uid " + std::to_string(who.uid) + ")");
  request_schedule();
  out.add_done("reconfigure");
  return out;
}

}  // namespace hq::cmd
