// srun on another host than its job's step manager (srun outside a job, or inside salloc):
// the connection to that node agent's peer listener, TLS pinned to the fingerprint the
// controller handed out (plain TCP on a plaintext cluster), with a user token in Hello.
// srun's session code speaks frames on a plain descriptor; a relay thread carries them
// between that descriptor and the TLS connection, so both transports share it.
#pragma once
#include <string>

#include "core/status.hpp"

namespace hq::cmd {

struct StepMgrAddress {
  std::string node, host;
  uint32_t port = 0;
  std::string fingerprint;  // "" on a plaintext cluster
};

// Connects and shakes hands; returns the local end of the relay (close it to hang up).
Result<int> dial_stepmgr(const StepMgrAddress& at, bool plaintext, const std::string& token, double timeout_s = 10);
// Waits (up to `timeout_s`) for the relays of hung-up links to finish, so that srun never
// exits while a relay thread still runs (its TLS close and teardown raced the process's
// exit and could abort it).
void await_stepmgr_relays(double timeout_s = 3);

}  // namespace hq::cmd
