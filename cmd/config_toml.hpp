// Loads the cluster config from TOML into core::ClusterConfig. Every key is checked:
// unknown keys and bad values fail with "file:line: what was expected".
// toml++ is confined to config_toml.cpp.
#pragma once
#include <string>

#include "core/config.hpp"

namespace hq::cmd {

Result<ClusterConfig> load_config_file(const std::string& path);
Result<ClusterConfig> load_config_text(const std::string& text, const std::string& source_name);

}  // namespace hq::cmd
