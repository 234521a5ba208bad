// Signal names as Slurm's commands take them: "USR1", "SIGUSR1" or a number 1-64.
// Pure; thread-safe.
#pragma once
#include <string>
#include <string_view>

#include "core/status.hpp"

namespace hq {

Result<int> signal_number(std::string_view name);
// "SIGTERM" for 15; "SIG<N>" for a number without a name here; "" for 0.
std::string signal_name(int number);

}  // namespace hq
