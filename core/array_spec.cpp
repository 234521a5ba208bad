#include "core/array_spec.hpp"

#include <algorithm>
#include <string>

#include "core/hardware.hpp"
#include "core/units.hpp"

namespace hq {

Result<ArraySpec> parse_array(std::string_view text, int32_t max_size) {
  ArraySpec out;
  auto bad = [&](const std::string& why) { return invalid("Invalid job array specification '" + std::string(text) + "': " + why); };
  std::string_view list = text;
  if (auto pct = text.find('%'); pct != std::string_view::npos) {
    auto t = parse_int(text.substr(pct + 1), 0, 1 << 30);
    if (!t) return bad("the %throttle must be a number");
    out.throttle = static_cast<int32_t>(*t);
    list = text.substr(0, pct);
  }
  if (list.empty()) return bad("no indices");
  bool stepped = false;
  for (std::string_view part : split(list, ',')) {
    int64_t step = 1;
    if (auto colon = part.find(':'); colon != std::string_view::npos) {
      auto s = parse_int(part.substr(colon + 1), 1, max_size);
      if (!s) return bad("the :step must be a positive number");
      step = *s;
      if (!stepped) out.step = static_cast<int32_t>(step);
      stepped = true;
      part = part.substr(0, colon);
    }
    auto dash = part.find('-');
    auto lo = parse_int(part.substr(0, dash), 0, INT32_MAX);
    auto hi = dash == std::string_view::npos ? lo : parse_int(part.substr(dash + 1), 0, INT32_MAX);
    if (!lo || !hi || *hi < *lo) return bad("'" + std::string(part) + "' is not an index or a range");
    if (*hi >= max_size) return bad("indices must be below MaxArraySize (" + std::to_string(max_size) + ")");
    for (int64_t i = *lo; i <= *hi; i += step) out.indices.push_back(static_cast<int32_t>(i));
    if (out.indices.size() > static_cast<size_t>(max_size)) return bad("more tasks than MaxArraySize");
  }
  std::sort(out.indices.begin(), out.indices.end());
  out.indices.erase(std::unique(out.indices.begin(), out.indices.end()), out.indices.end());
  return out;
}

namespace {

// The step of `indices` when Slurm writes them as "first-last:step" (xlate_array_task_str):
// a span over 10, more than 5 tasks, the first's neighbour not among them, every gap the
// same; 0 otherwise.
int32_t step_form(const std::vector<int32_t>& indices) {
  if (indices.size() <= 5 || indices.back() - indices.front() <= 10 || indices[1] == indices[0] + 1) return 0;
  int32_t step = indices[1] - indices[0];
  for (size_t i = 2; i < indices.size(); ++i)
    if (indices[i] - indices[i - 1] != step) return 0;
  return step;
}

}  // namespace

std::string format_array_indices(const std::vector<int32_t>& indices, int32_t throttle) {
  int32_t step = step_form(indices);
  std::string out = step ? std::to_string(indices.front()) + "-" + std::to_string(indices.back()) + ":" + std::to_string(step)
                         : format_cpulist(indices);  // the same run form as a CPU list
  if (throttle > 0) out += '%' + std::to_string(throttle);
  return out;
}

}  // namespace hq
