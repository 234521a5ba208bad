// The snapshot's name index: every name it holds is found, nothing else is, and it grows.
#include <doctest/doctest.h>

#include "core/hostlist.hpp"
#include "core/sched_snapshot.hpp"

using namespace hq;

TEST_CASE("the snapshot's name index finds every name it holds and nothing else") {
  std::vector<std::string> names = *expand_hostlist("gpu[1-700],cpu[001-300],x");
  NameIndex index;
  index.reserve(names.size());
  for (size_t i = 0; i < names.size(); ++i) index.add(names[i], static_cast<int32_t>(i));
  for (size_t i = 0; i < names.size(); ++i) REQUIRE(index.find(names[i]) == static_cast<int32_t>(i));
  CHECK(index.find("gpu701") == -1);
  CHECK(index.find("cpu1") == -1);
  CHECK(index.find("") == -1);
  CHECK(NameIndex{}.find("x") == -1);
}

TEST_CASE("the name index grows past what it was sized for") {
  std::vector<std::string> names = *expand_hostlist("n[1-100]");
  NameIndex index;
  index.reserve(3);
  for (size_t i = 0; i < names.size(); ++i) index.add(names[i], static_cast<int32_t>(i));
  for (size_t i = 0; i < names.size(); ++i) REQUIRE(index.find(names[i]) == static_cast<int32_t>(i));
  CHECK(index.find("n101") == -1);
}
