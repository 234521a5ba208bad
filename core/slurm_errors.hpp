// Slurm's error texts (slurm_strerror) that hq's refusals begin with. hq often adds its own
// explanation after ": " ("Node count specification invalid: the job needs 3 nodes, ...");
// the Slurm personas print only Slurm's text, hq's own commands print the whole message.
#pragma once
#include <string>

namespace hq {

// The Slurm text `message` begins with (followed by ": " or nothing), else `message` itself.
std::string slurm_error_text(const std::string& message);

}  // namespace hq
