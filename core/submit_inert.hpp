// The options of Slurm 22.05's sbatch that hq takes without acting on them, each with why,
// and the ones it refuses with a reason: a batch script written for Slurm never fails for
// one line hq has no use for. `notice` ones are told on stderr ("sbatch: warning: ...")
// because a user expects them to do something hq does not do yet (mail, QOS, ...);
// the others mean nothing on hq (burst buffers, node reboots, ...). docs/slurm-compat.md
// lists every one (a unit test keeps it in step with this table). Pure data; thread-safe.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "core/status.hpp"

namespace hq {

enum class InertArg { kNone, kRequired, kOptional };

struct InertOption {
  std::string_view name;
  char short_name = 0;
  InertArg arg = InertArg::kRequired;
  bool notice = false;      // accepted, told on stderr: it does not act on hq yet
  bool refused = false;     // refused with `why` as the error
  std::string_view why;
  bool allocation = false;  // srun's: the allocation's option, which acts when srun makes one
};

const std::vector<InertOption>& inert_submit_options();

// Adds `line` to `told` unless it is there already: each such line is said once.
void tell_once(std::vector<std::string>& told, std::string line);

// An inert option given (sbatch's or srun's): its refusal "--NAME: WHY", or ok; a `notice`
// one adds "--NAME: WHY" to `told` once when `tell` (not for a value from the environment).
Status answer_inert_option(const InertOption& o, std::vector<std::string>& told, bool tell = true);

}  // namespace hq
