#include "cmd/agent/step_ids.hpp"

#include <cerrno>
#include <cstdio>
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

// The count in place, fixed width (so a shorter one never leaves digits of a longer one).
void write_count(int fd, const std::string& file, uint32_t next) {
  char text[16];
  int n = std::snprintf(text, sizeof text, "%010u\n", next);
  if (::pwrite(fd, text, static_cast<size_t>(n), 0) != n || ::ftruncate(fd, n) != 0)  // a longer old content goes
    log::warn("cannot keep the step count in " + file + ": " + std::strerror(errno));
}

}  // namespace

uint32_t StepIds::issue(uint64_t job_id, const std::string& file) {
  auto [it, first] = jobs_.try_emplace(job_id);
  Count& c = it->second;
  if (first && !file.empty()) {
    c.next = read_count(file);
    c.fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);  // no O_TRUNC: never empty, even for a moment
    if (c.fd < 0) log::warn("cannot keep the step count in " + file + ": " + std::strerror(errno));
  }
  uint32_t id = c.next++;
  if (c.fd >= 0) write_count(c.fd, file, c.next);
  return id;
}

void StepIds::forget(uint64_t job_id) {
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return;
  if (it->second.fd >= 0) ::close(it->second.fd);
  jobs_.erase(it);
}

StepIds::~StepIds() {
  for (auto& [id, c] : jobs_)
    if (c.fd >= 0) ::close(c.fd);
}

}  // namespace hq::cmd
