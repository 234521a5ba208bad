#include "net/log.hpp"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace hq::log {

void init(const std::string& role, const std::string& file, bool verbose) {
  try {
    std::shared_ptr<spdlog::logger> logger;
    if (file.empty()) logger = spdlog::stderr_color_mt(role);
    else logger = spdlog::basic_logger_mt(role, file);
    logger->set_pattern("[%Y-%m-%dT%H:%M:%S.%e] [%n] [%l] %v");
    logger->set_level(verbose ? spdlog::level::debug : spdlog::level::info);
    logger->flush_on(spdlog::level::info);
    spdlog::set_default_logger(logger);
  } catch (const std::exception& e) {
    spdlog::error("cannot open log '{}': {}", file, e.what());
  }
}

void debug(const std::string& msg) { spdlog::debug(msg); }
void info(const std::string& msg) { spdlog::info(msg); }
void warn(const std::string& msg) { spdlog::warn(msg); }
void error(const std::string& msg) { spdlog::error(msg); }

}  // namespace hq::log
