#include "core/job.hpp"

#include <array>
#include <utility>

namespace hq {
namespace {
constexpr std::array<std::pair<std::string_view, std::string_view>, 8> kNames{{
    {"PENDING", "PD"}, {"RUNNING", "R"}, {"COMPLETED", "CD"}, {"CANCELLED", "CA"},
    {"FAILED", "F"}, {"TIMEOUT", "TO"}, {"NODE_FAIL", "NF"}, {"OUT_OF_MEMORY", "OOM"},
}};
}  // namespace

std::string_view job_state_name(JobState s) { return kNames[static_cast<size_t>(s)].first; }
std::string_view job_state_code(JobState s) { return kNames[static_cast<size_t>(s)].second; }

bool parse_job_state(std::string_view name, JobState& out) {
  for (size_t i = 0; i < kNames.size(); ++i) {
    if (kNames[i].first == name || kNames[i].second == name) {
      out = static_cast<JobState>(i);
      return true;
    }
  }
  return false;
}

bool is_terminal(JobState s) { return s != JobState::kPending && s != JobState::kRunning; }

}  // namespace hq
