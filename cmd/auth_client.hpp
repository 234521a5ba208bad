// Client side of the token service (cmd/auth_service.hpp), free of Asio headers.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.hpp"

namespace hq::cmd {

// A stream socket connected to the Unix socket at `path` (close-on-exec), or -1 with errno
// set (ENAMETOOLONG for a path that does not fit).
int connect_unix(const std::string& path);
// Connects to the token service at `path`; returns a token for the calling process.
Result<std::string> fetch_token(const std::string& path);
// Supplementary groups of process `pid` (from /proc).
std::vector<uint32_t> process_groups(int pid);

}  // namespace hq::cmd
