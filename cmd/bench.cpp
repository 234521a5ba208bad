// `hq bench`: built-in benchmarks (filled in below).
#include <iostream>

#include "cmd/commands.hpp"

namespace hq::cmd {

int run_bench(const Args& args) {
  std::cerr << "hq bench: not built yet\n";
  return 2;
}

}  // namespace hq::cmd
