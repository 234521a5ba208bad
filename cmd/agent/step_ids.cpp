#include "cmd/agent/step_ids.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

#include "cmd/paths.hpp"
#include "core/units.hpp"
#include "net/log.hpp"

namespace hq::cmd {
namespace {

// The count left by an earlier agent: a decimal below UINT32_MAX, else 0.
uint32_t read_count(const std::string& file) {
  auto v = parse_int(trim(read_small_file(file)), 0, UINT32_MAX - 1);
  return v ? static_cast<uint32_t>(*v) : 0;
}

// Written beside and renamed over, so a kill at any moment leaves the old count or the new one.
void write_count(const std::string& file, uint32_t next) {
  std::string tmp = file + ".new";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  std::string text = std::to_string(next) + "\n";
  bool ok = fd >= 0 && ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  int err = errno;
  if (fd >= 0) ::close(fd);
  if (ok && ::rename(tmp.c_str(), file.c_str()) != 0) {
    ok = false;
    err = errno;
  }
  if (!ok) log::warn("cannot keep the step count in " + file + ": " + std::strerror(err));
}

}  // namespace

uint32_t StepIds::issue(uint64_t job_id, const std::string& file) {
  auto [it, first] = next_.try_emplace(job_id, 0);
  if (first && !file.empty()) it->second = read_count(file);
  uint32_t id = it->second++;
  if (!file.empty()) write_count(file, it->second);
  return id;
}

}  // namespace hq::cmd
