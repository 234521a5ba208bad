// Reading captured outputs (tests/fixtures/...) for golden tests: a file's whole text, ""
// when it cannot be read (the comparison then fails and names the file).
#pragma once
#include <fstream>
#include <sstream>
#include <string>

#ifndef HQ_SOURCE_DIR
#define HQ_SOURCE_DIR "."
#endif

namespace hq::test {

inline std::string slurp_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace hq::test
