#include "core/slurm_errors.hpp"

#include <array>
#include <string_view>
#include <utility>

namespace hq {
namespace {

// slurm_strerror texts of the refusals hq explains further (Slurm 22.05 wording).
constexpr std::array<std::string_view, 12> kSlurmTexts{
    "Invalid partition name specified",
    "Invalid feature specification",
    "Requested node configuration is not available",
    "Node count specification invalid",
    "Invalid job array specification",
    "Access/permission denied",
    "Requested time limit is invalid (missing or exceeds some limit)",
    "Invalid node name specified",
    "Job dependency problem",
    "Invalid qos specification",
    "Invalid account or account/partition combination specified",
    "Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)",
};

}  // namespace

// hq's own first words where Slurm answers with another text.
constexpr std::array<std::pair<std::string_view, std::string_view>, 1> kRenamed{{
    {"Invalid dependency specification", "Job dependency problem"},
}};

std::string slurm_error_text(const std::string& message) {
  for (const auto& [hq_words, slurm] : kRenamed)
    if (message.compare(0, hq_words.size(), hq_words) == 0) return std::string(slurm);
  for (std::string_view text : kSlurmTexts) {
    if (message.compare(0, text.size(), text) != 0) continue;
    std::string_view rest = std::string_view(message).substr(text.size());
    if (rest.empty() || rest.substr(0, 1) == ":" || rest.substr(0, 1) == " ") return std::string(text);
  }
  return message;
}

}  // namespace hq
