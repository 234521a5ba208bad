// SLUIDs: the bit layout and text form of reference accounting.md §6, and a clock whose ids
// only grow.
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "core/acct_model.hpp"
#include "core/sluid.hpp"

using namespace hq;

TEST_CASE("sluid: 12 bits of cluster, 42 of milliseconds, 10 of sequence, written s + 13 Crockford characters") {
  uint64_t id = make_sluid(2, 1795603689123, 5);
  CHECK(sluid_cluster(id) == 2);
  CHECK(sluid_ms(id) == 1795603689123);
  CHECK((id & 0x3ff) == 5);
  CHECK(id == ((uint64_t{2} << 52) | (uint64_t{1795603689123} << 10) | 5));
  std::string text = sluid_text(id);
  CHECK(text.size() == 14);
  CHECK(text[0] == 's');
  CHECK(text.find_first_not_of("s0123456789ABCDEFGHJKMNPQRSTVWXYZ") == std::string::npos);
  CHECK(parse_sluid(text) == id);
  std::string lower = text;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  CHECK(parse_sluid(lower) == id);  // any case
  CHECK(sluid_text(1) == "s0000000000001");
  CHECK(sluid_text(32) == "s0000000000010");
  CHECK(sluid_text(~uint64_t{0}) == "sFZZZZZZZZZZZZ");
  CHECK(parse_sluid("sFZZZZZZZZZZZZ") == ~uint64_t{0});
  CHECK(parse_sluid("s00000000000O1") == 1);  // Crockford: O reads as 0
  CHECK(sluid_text(0).empty());
  for (const char* bad : {"", "s", "x0000000000001", "s000000000000U", "sG000000000000", "s0000000000000", "s00000000000001"})
    CHECK_FALSE(parse_sluid(bad).has_value());
}

TEST_CASE("sluid clock: ids grow within a millisecond, past 1,023 into the next, and never go back") {
  SluidClock clock;
  std::vector<uint64_t> ids;
  for (int i = 0; i < 1100; ++i) ids.push_back(clock.next(3, 1000));
  CHECK(std::is_sorted(ids.begin(), ids.end()));
  CHECK(std::adjacent_find(ids.begin(), ids.end()) == ids.end());
  CHECK(sluid_ms(ids[1023]) == 1000);
  CHECK(sluid_ms(ids[1024]) == 1001);  // the sequence overflowed
  uint64_t later = clock.next(3, 500);  // the clock stepped back
  CHECK(later > ids.back());
  std::vector<std::string> texts;
  for (uint64_t id : ids) texts.push_back(sluid_text(id));
  CHECK(std::is_sorted(texts.begin(), texts.end()));  // the text sorts as the ids do
  SluidClock restarted;
  restarted.observe(later);
  CHECK(restarted.next(3, 400) > later);
}

TEST_CASE("sluid: a cluster gets the lowest free id from 2 when it registers, and keeps it") {
  AcctModel m = default_acct_model();
  register_cluster(m, "a", "", 0);
  register_cluster(m, "b", "", 0);
  CHECK(m.clusters["a"].id == 2);
  CHECK(m.clusters["b"].id == 3);
  m.clusters.erase("a");
  register_cluster(m, "c", "", 0);
  register_cluster(m, "b", "h", 1);  // again: the same id
  CHECK(m.clusters["c"].id == 2);
  CHECK(m.clusters["b"].id == 3);
}
