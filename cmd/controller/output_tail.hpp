// A job's output tail for the dashboard (/hq/v1/jobs/{id}/output): the last bytes of its
// file read as the job's own user (its uid, gid and groups), in a detached process (a double
// fork, as job mail runs), so a slow or hung file system never holds the controller's loop
// and root's rights never reach a file the user could not read. Only a regular file owned by
// the user is read, reached without following a symbolic link at its last step, and opened
// only once it is known to be one (no device, FIFO or socket is ever opened). The answer
// comes back on the loop; each call answers once. Runs on the controller's loop thread.
#pragma once
#include <asio/io_context.hpp>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/status.hpp"

namespace hq::cmd {

struct TailRequest {
  std::string path;
  uint32_t uid = 0, gid = 0;
  std::vector<uint32_t> groups;
  size_t most = 16 * 1024;
  double timeout_s = 10;
};

struct TailResult {
  int64_t size = 0;
  std::string tail;  // the last `most` bytes
};

// `done` gets the tail, or one error for a file that is missing, not the user's, not a
// regular file or out of reach in time (the same words for each: nothing tells which).
void read_tail_as_user(asio::io_context& io, const TailRequest& req, std::function<void(Result<TailResult>)> done);

}  // namespace hq::cmd
