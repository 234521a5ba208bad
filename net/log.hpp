// Logging facade: keeps spdlog (a heavy header) inside net/log.cpp.
// Thread-safe (spdlog's sinks are mt).
#pragma once
#include <string>

namespace hq::log {

void init(const std::string& role, const std::string& file = "", bool verbose = false);
void debug(const std::string& msg);
void info(const std::string& msg);
void warn(const std::string& msg);
void error(const std::string& msg);

}  // namespace hq::log
