// Text (core/text.hpp): values of every length round-trip, copies are deep, moves leave the
// source empty, self-assignment from a view of itself keeps the value, and it orders and
// compares like std::string. Also Result (core/status.hpp): moving its value out moves it.
#include <doctest/doctest.h>

#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/status.hpp"
#include "core/text.hpp"

using hq::Text;

namespace {
std::string text_of_length(size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) s += static_cast<char>('a' + i % 26);
  return s;
}
}  // namespace

TEST_CASE("Text keeps every length, the short ones in place, and ends each with a NUL") {
  static_assert(sizeof(Text) == 8);
  for (size_t n : {0, 1, 5, 6, 7, 8, 15, 16, 100, 70000}) {
    std::string s = text_of_length(n);
    Text t = s;
    CHECK(t.size() == n);
    CHECK(t.empty() == (n == 0));
    CHECK(t.view() == s);
    CHECK(std::string(t.c_str()) == s);
    CHECK(t.str() == s);
    CHECK(t == s);
  }
  std::string with_nul("a\0b", 3);
  CHECK(Text(with_nul).view() == with_nul);
}

TEST_CASE("Text copies are deep and moves leave the source empty") {
  for (size_t n : {3, 6, 7, 40}) {
    std::string s = text_of_length(n);
    Text a = s;
    Text b = a;
    CHECK(b == s);
    if (n > 6) CHECK(a.data() != b.data());
    a = "changed";
    CHECK(b == s);
    Text c = std::move(b);
    CHECK(c == s);
    CHECK(b.empty());  // NOLINT(bugprone-use-after-move): moved-from is specified as empty
    Text d;
    d = std::move(c);
    CHECK(d == s);
    CHECK(c.empty());  // NOLINT(bugprone-use-after-move)
    d = d;  // NOLINT(clang-diagnostic-self-assign-overloaded)
    CHECK(d == s);
    d = std::move(d);  // NOLINT
    CHECK(d == s);
  }
}

TEST_CASE("Text assigned a view of itself keeps the right bytes") {
  for (size_t n : {6, 12}) {
    Text t = text_of_length(n);
    t = t.view().substr(1);
    CHECK(t == text_of_length(n).substr(1));
    t = t.view();
    CHECK(t == text_of_length(n).substr(1));
  }
  Text t = "abcdef";
  t.clear();
  CHECK(t.empty());
  CHECK(t == "");
}

TEST_CASE("Text compares, orders and hashes like std::string, over random values") {
  std::mt19937 rng(17);
  std::vector<std::string> values;
  for (int i = 0; i < 400; ++i) values.push_back(text_of_length(rng() % 12).substr(0, rng() % 12));
  for (int i = 0; i < 2000; ++i) {
    const std::string& x = values[rng() % values.size()];
    const std::string& y = values[rng() % values.size()];
    Text a = x, b = y;
    CHECK((a == b) == (x == y));
    CHECK((a < b) == (x < y));
    CHECK((a <=> y) == (x <=> y));
    CHECK((y == a) == (y == x));
    CHECK(std::hash<Text>{}(a) == std::hash<std::string_view>{}(x));
    CHECK(a + y == x + y);
    CHECK("<" + a == "<" + x);
  }
  std::map<Text, int, std::less<>> by_name;
  by_name[Text("b")] = 2;
  by_name[Text("a-long-name")] = 1;
  CHECK(by_name.begin()->first == "a-long-name");
  CHECK(by_name.find(std::string_view("b")) != by_name.end());
}

TEST_CASE("Result: std::move(*r) takes the value's buffer, const access copies") {
  hq::Result<std::string> r(std::string(1000, 'x'));  // past the short-string buffer: on the heap
  const char* held = r->data();
  const hq::Result<std::string>& seen = r;
  std::string copy = *seen;
  CHECK(copy.data() != held);
  std::string moved = std::move(*r);
  CHECK(moved.data() == held);
  CHECK(moved.size() == 1000);
  std::string from_temporary = *hq::Result<std::string>(std::string(2000, 'y'));
  CHECK(from_temporary.size() == 2000);
}
