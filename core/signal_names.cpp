// Signal names (see signal_names.hpp).
#include "core/signal_names.hpp"

#include <string>
#include <utility>

#include "core/units.hpp"

namespace hq {

namespace {

constexpr std::pair<std::string_view, int> kSignals[] = {
    {"HUP", 1}, {"INT", 2}, {"QUIT", 3}, {"KILL", 9}, {"USR1", 10}, {"USR2", 12}, {"ALRM", 14},
    {"TERM", 15}, {"CONT", 18}, {"STOP", 19}, {"TSTP", 20}, {"URG", 23}, {"XCPU", 24}};

}  // namespace

std::string signal_name(int number) {
  for (const auto& [n, num] : kSignals)
    if (num == number) return "SIG" + std::string(n);
  return number > 0 ? "SIG" + std::to_string(number) : "";
}

Result<int> signal_number(std::string_view name) {
  std::string_view sig = name.rfind("SIG", 0) == 0 ? name.substr(3) : name;
  for (const auto& [n, num] : kSignals)
    if (sig == n) return num;
  auto n = parse_int(sig, 1, 64);
  if (!n) return invalid("invalid signal '" + std::string(name) + "'");
  return static_cast<int>(*n);
}

}  // namespace hq
