// ListingCache: what it keeps, for how long, and that a kept text cannot be changed by whoever
// holds its file.
#include <doctest/doctest.h>

#include <cerrno>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cmd/controller/listing_cache.hpp"

namespace hq::cmd {
namespace {

std::string text_of(const ListingCache::Entry& e) {
  std::string out = "head:";
  REQUIRE(ListingCache::append_text(e, out));
  return out.substr(5);
}

TEST_CASE("ListingCache: a listing is found for its key while the stamp and the clock allow") {
  ListingCache cache(0);
  std::string text(40000, 'x');
  text[123] = 'y';
  CHECK(cache.find("k", 1, 100) == nullptr);
  REQUIRE(cache.keep("k", 1, 200, text, {7, 9}));
  const auto* e = cache.find("k", 1, 150);
  REQUIRE(e != nullptr);
  CHECK(text_of(*e) == text);
  CHECK(e->unknown_ids == std::vector<uint64_t>{7, 9});
  CHECK(cache.find("other", 1, 150) == nullptr);
  CHECK(cache.find("k", 1, 200) == nullptr);  // its valid_until reached
  CHECK(cache.find("k", 1, 199) != nullptr);
  CHECK(cache.find("k", 2, 150) == nullptr);  // the state moved on: dropped
  CHECK(cache.size() == 0);
  CHECK(cache.find("k", 1, 150) == nullptr);
}

TEST_CASE("ListingCache: a key kept again replaces its listing, and the least recently used goes past kMostEntries") {
  ListingCache cache(0);
  REQUIRE(cache.keep("a", 1, 1000, "first", {}));
  REQUIRE(cache.keep("a", 1, 1000, "second", {}));
  CHECK(cache.size() == 1);
  CHECK(text_of(*cache.find("a", 1, 0)) == "second");
  for (const char* k : {"b", "c", "d"}) REQUIRE(cache.keep(k, 1, 1000, k, {}));
  CHECK(cache.find("a", 1, 0) != nullptr);  // used now: "b" is the oldest
  REQUIRE(cache.keep("e", 1, 1000, "e", {}));
  CHECK(cache.size() == ListingCache::kMostEntries);
  CHECK(cache.find("b", 1, 0) == nullptr);
  for (const char* k : {"a", "c", "d", "e"}) CHECK(cache.find(k, 1, 0) != nullptr);
  REQUIRE(cache.keep("f", 2, 1000, "f", {}));  // of a newer stamp: the others are stale
  CHECK(cache.size() == 1);
}

TEST_CASE("ListingCache: a short text is not kept, and a kept one's file refuses writes, growth and shrinking") {
  ListingCache cache(1000);
  CHECK(!cache.keep("short", 1, 1000, std::string(999, 's'), {}));
  CHECK(cache.size() == 0);
  REQUIRE(cache.keep("long", 1, 1000, std::string(1000, 'l'), {}));
  const auto* e = cache.find("long", 1, 0);
  REQUIRE(e != nullptr);
  int fd = ::dup(e->fd);  // what a client given the file holds
  REQUIRE(fd >= 0);
  CHECK(::pwrite(fd, "X", 1, 0) == -1);
  CHECK(errno == EPERM);
  CHECK(::ftruncate(fd, 10) == -1);
  CHECK(::ftruncate(fd, 5000) == -1);
  CHECK(::mmap(nullptr, 1000, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) == MAP_FAILED);
  CHECK(::fcntl(fd, F_ADD_SEALS, 0) == -1);  // sealed for good, seals included
  ::close(fd);
  CHECK(text_of(*e) == std::string(1000, 'l'));
}

TEST_CASE("listing_key: who asks is part of the key") {
  CHECK(listing_key(1000, false, "r") != listing_key(1001, false, "r"));
  CHECK(listing_key(1000, false, "r") != listing_key(1000, true, "r"));
  CHECK(listing_key(1000, false, "r") != listing_key(1000, false, "s"));
  CHECK(listing_key(1, false, "0r") != listing_key(10, false, "r"));
}

}  // namespace
}  // namespace hq::cmd
