#include <doctest/doctest.h>

#include <cctype>
#include <cstdint>

#include "core/hostlist.hpp"

using namespace hq;

namespace {
std::vector<std::string> ex(const std::string& e) {
  auto r = expand_hostlist(e);
  REQUIRE_MESSAGE(r.is_ok(), r.status().message());
  return r.value();
}
std::string ranged(const std::string& e, HostlistOrder o = HostlistOrder::kAsGiven) {
  return compress_hostlist(ex(e), o);
}
}  // namespace

TEST_CASE("hostlist: expand ranges in order") {
  auto v = ex("tux[0-3,12,18-20]");
  REQUIRE(v.size() == 8);
  CHECK(v.front() == "tux0");
  CHECK(v[4] == "tux12");
  CHECK(v.back() == "tux20");
  CHECK(ranged("tux[0-3,12,18-20]") == "tux[0-3,12,18-20]");
}

TEST_CASE("hostlist: prefix brackets vary slowest from the right") {
  auto v = ex("a[1-2]b[1-2]c[1-2]");
  std::vector<std::string> want = {"a1b1c1", "a1b1c2", "a2b1c1", "a2b1c2",
                                   "a1b2c1", "a1b2c2", "a2b2c1", "a2b2c2"};
  CHECK(v == want);
  CHECK(ranged("a[1-2]b[1-2]c[1-2]") == "a1b1c[1-2],a2b1c[1-2],a1b2c[1-2],a2b2c[1-2]");
  CHECK(ranged("rack[1-2]-node[01-04]") == "rack1-node[01-04],rack2-node[01-04]");
}

TEST_CASE("hostlist: suffixes and widths") {
  CHECK(ex("node[01-04]-ib")[3] == "node04-ib");
  CHECK(ranged("node[01-04]-ib") == "node01-ib,node02-ib,node03-ib,node04-ib");
  CHECK(ranged("n[1-3]:4") == "n1:4,n2:4,n3:4");
  CHECK(ranged("node9,node10") == "node[9-10]");
  CHECK(ranged("node09,node10") == "node[09-10]");
  CHECK(ranged("node01,node2") == "node[01,2]");
  CHECK(ranged("n[001-003],n004") == "n[001-004]");
  auto wide = ex("n[0-0099]");
  CHECK(wide.size() == 100);
  CHECK(wide.back() == "n99");
  CHECK(ranged("n[0-0099]") == "n[0-99]");
}

TEST_CASE("hostlist: order, duplicates, sorting") {
  CHECK(ranged("tux2,tux1,tux2") == "tux[2,1-2]");
  CHECK(ranged("tux2,tux1,tux2", HostlistOrder::kSorted) == "tux[1-2,2]");
  CHECK(ranged("tux2,tux1,tux2", HostlistOrder::kSortedUnique) == "tux[1-2]");
  CHECK(ranged("a1,a2,b1,a3") == "a[1-2],b1,a3");
  CHECK(ranged("node[1-3],node[2-5]") == "node[1-3,2-5]");
  CHECK(ranged("node[1-3],node[2-5]", HostlistOrder::kSortedUnique) == "node[1-5]");
  CHECK(ranged("n10,n9,n1,n2") == "n[10,9,1-2]");
  CHECK(ranged("n10,n9,n1,n2", HostlistOrder::kSorted) == "n[1-2,9-10]");
  CHECK(ranged("x10,x9,x010", HostlistOrder::kSorted) == "x[9-10,010]");
  CHECK(ranged("N[1-2],n[1-2]") == "N[1-2],n[1-2]");
  CHECK(ex("a, b  c,,d").size() == 4);
}

TEST_CASE("hostlist: invalid input is an error, not a crash") {
  for (const char* bad : {"node[1-65537]", "n[5-3]", "n[1-2", "n[a-c]", "n[-1]", "n]1", "n[1-2]x[3"}) {
    CHECK_MESSAGE(!expand_hostlist(bad).is_ok(), bad);
  }
  CHECK(ex("node[1-65536]").size() == 65536);
  CHECK(!expand_hostlist("a[0-65535]b[0-65535]").is_ok());  // bounded total
}

namespace {
// The comparison as first written (digit runs by value from the first byte on): the
// reference the faster one must agree with.
bool reference_natural_less(std::string_view a, std::string_view b) {
  auto digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      size_t ie = i, je = j;
      while (ie < a.size() && digit(a[ie])) ++ie;
      while (je < b.size() && digit(b[je])) ++je;
      std::string_view na = a.substr(i, ie - i), nb = b.substr(j, je - j);
      while (na.size() > 1 && na[0] == '0') na.remove_prefix(1);
      while (nb.size() > 1 && nb[0] == '0') nb.remove_prefix(1);
      if (na.size() != nb.size()) return na.size() < nb.size();
      if (na != nb) return na < nb;
      i = ie;
      j = je;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}
}  // namespace

TEST_CASE("hostlist: natural order agrees with the reference comparison on random names") {
  // Names from a small alphabet (digits, zeros, letters, a separator, a high byte) so that
  // shared prefixes, digit runs of different lengths and leading zeros all come up often.
  const std::string alphabet = "0019az-\xe9";
  uint64_t seed = 0x9e3779b97f4a7c15ULL;
  auto next = [&] {
    seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
    return seed;
  };
  auto name = [&] {
    std::string n = next() % 2 ? "node" : "";
    for (size_t len = next() % 7; len > 0; --len) n += alphabet[next() % alphabet.size()];
    return n;
  };
  int disagreements = 0;
  for (int round = 0; round < 200000; ++round) {
    std::string a = name(), b = next() % 3 ? name() : a + alphabet[next() % alphabet.size()];
    if (natural_less(a, b) != reference_natural_less(a, b) && ++disagreements <= 5)
      FAIL_CHECK("natural_less(\"" << a << "\", \"" << b << "\") is " << natural_less(a, b));
  }
  CHECK(disagreements == 0);
  CHECK(natural_less("n2", "n10"));
  CHECK_FALSE(natural_less("n10", "n2"));
  CHECK(natural_less("rack1-n9", "rack1-n10"));
  CHECK(natural_less("rack2-n1", "rack10-n1"));
  CHECK_FALSE(natural_less("n01", "n1"));  // equal by value: neither sorts first
  CHECK_FALSE(natural_less("n1", "n01"));
}
