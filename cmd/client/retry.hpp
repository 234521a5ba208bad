// Exactly-once requests from command-line clients: a request that changes state carries
// an idempotency key, and is sent again with the same key when the connection to the
// controller fails before its answer (a controller restart, a cut connection). The
// controller answers a retry as it answered the first (docs/design/protocol.md).
// One thread, like every client.
#pragma once
#include <memory>
#include <string>

#include "core/status.hpp"
#include "hq.pb.h"
#include "net/client.hpp"

namespace hq::cmd {

// A fresh key: 128 random bits in hex.
std::string new_request_key();

// Sends `req` on `client` (connecting first when it is null) and waits for its answer; when
// the controller cannot be reached or the connection fails (Unavailable) it connects again
// (`client` is replaced) and resends, for up to `budget_s` seconds: a controller restart
// (under a second) goes unnoticed, as Slurm's sbatch rides out a slurmctld restart. Other
// errors, and the controller's own error replies, are returned at once. `req` is sent as it
// is, not copied; only its seq changes.
Result<pb::Envelope> call_with_retry(std::unique_ptr<net::RpcClient>& client, pb::Envelope& req,
                                     double budget_s = 15);

}  // namespace hq::cmd
