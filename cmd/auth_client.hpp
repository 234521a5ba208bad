// Client side of the token service (cmd/auth_service.hpp), free of Asio headers.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.hpp"

namespace hq::cmd {

// Connects to the token service at `path`; returns a token for the calling process.
Result<std::string> fetch_token(const std::string& path);
// Supplementary groups of process `pid` (from /proc).
std::vector<uint32_t> process_groups(int pid);

}  // namespace hq::cmd
