// What the end-to-end tests of the controller's HTTP side share (http_test, rest_test,
// dashboard_test): a cluster whose controller serves HTTPS on a free port, ready once
// state/http.addr names it.
#pragma once
#include <string>

#include "cluster_fixture.hpp"

namespace hq::test {

inline std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// The controller's HTTP address ("127.0.0.1:PORT"), waited for (bounded); "" if none came.
inline std::string http_addr(const LocalCluster& c) {
  std::string addr;
  wait_until([&] { return !(addr = trimmed(slurp(c.dir() + "/state/http.addr"))).empty(); }, 10);
  return addr;
}

}  // namespace hq::test
