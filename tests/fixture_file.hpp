// Reading captured outputs (tests/fixtures/...) for golden tests: a file's whole text, ""
// when it cannot be read (the comparison then fails and names the file).
#pragma once
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

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

// Each capture listed in DIR/commands.txt ("FILE<TAB>COMMAND LINE" lines; '#' comments
// and blank lines skipped): fn(file, command).
template <typename Fn>
void for_each_capture(const std::string& dir, Fn&& fn) {
  std::istringstream commands(slurp_file(dir + "commands.txt"));
  std::string line;
  while (std::getline(commands, line)) {
    if (line.empty() || line[0] == '#') continue;
    size_t tab = line.find('\t');
    fn(line.substr(0, tab), line.substr(tab + 1));
  }
}

}  // namespace hq::test
