// Test helper: an accounting model changed by sacctmgr command lines, each run as root and
// committed, the test failing on the first that does not succeed. Words are split at spaces.
#pragma once
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include "core/acctmgr.hpp"

namespace hq::test {

inline std::vector<std::string> acctmgr_words(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

inline AcctModel after_acctmgr(AcctModel m, const std::vector<std::string>& lines) {
  for (const std::string& line : lines) {
    AcctMgrResult r = run_acctmgr(m, acctmgr_words(line), AcctMgrOptions{}, AcctMgrActor{"root", true});
    INFO(line << ": " << r.out << r.err);
    REQUIRE(r.rc == 0);
    m = r.model;
  }
  return m;
}

// A model of cluster "c" changed by sacctmgr command lines (as root, committed).
inline AcctModel cluster_model_after(const std::vector<std::string>& lines) {
  AcctModel m = default_acct_model();
  register_cluster(m, "c", "127.0.0.1", 1);
  return after_acctmgr(std::move(m), lines);
}

}  // namespace hq::test
