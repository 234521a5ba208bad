#include "core/partition_update.hpp"

#include "core/units.hpp"

namespace hq {

Result<PartitionUpdated> parse_partition_update(const PartitionConfig& current, const std::vector<std::string>& settings,
                                                Time now) {
  PartitionUpdated e{current.name, now, current.state, current.max_time, current.default_time};
  for (const auto& setting : settings) {
    size_t eq = setting.find('=');
    std::string key = to_lower(setting.substr(0, eq));
    std::string value = eq == std::string::npos ? "" : setting.substr(eq + 1);
    if (key == "partitionname") continue;
    if (key == "state") {
      std::string up = value;
      for (char& c : up) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      if (!parse_partition_state(up, e.state)) return invalid("Invalid input: " + setting);
    } else if (key == "maxtime" || key == "defaulttime") {
      auto d = parse_time_limit(value);
      if (!d) return invalid(std::string("Invalid ") + (key == "maxtime" ? "MaxTime" : "DefaultTime") + " value: " + value);
      (key == "maxtime" ? e.max_time : e.default_time) = *d;
    } else {
      return invalid("Update of this parameter is not supported: " + setting);
    }
  }
  return e;
}

}  // namespace hq
