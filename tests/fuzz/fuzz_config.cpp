// Fuzz: the TOML config loader returns a config or an error, never crashes.
#include <string>

#include "cmd/config_toml.hpp"

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto config = hq::cmd::load_config_text(text, "fuzz.toml");
  if (config && !config->nodes.empty() && config->nodes[0].names.empty()) __builtin_trap();  // loader invariant
  return 0;
}
