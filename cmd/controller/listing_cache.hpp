// Listings the controller made for squeue (QueueRequest.render), kept while nothing they
// show has changed, so that the same listing asked for again (squeue in a shell loop, a
// workflow engine polling, many users' monitors at once) is sent without being made again:
// over 5,000 jobs that is 2.5 ms of the controller's CPU a time, and the client waits for
// it. An entry is good while the state's listed_stamp is the one it was made at and the
// clock has not reached its valid_until (core listed_line_valid_until). Its text lives in
// a sealed memfd, not in the controller's heap; a local client may be given the file
// itself. At most kMostEntries listings, the least recently used going first; stale ones
// are dropped as soon as a lookup sees the stamp move. Event loop thread only.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hq::cmd {

// Shorter listings are made each time: they cost less to make than to keep.
constexpr size_t kLeastKeptListingBytes = 16 << 10;

class ListingCache {
 public:
  struct Entry {
    std::string key;
    uint64_t stamp = 0;
    int64_t valid_until = 0;
    int fd = -1;  // the text, sealed: no one writes, shrinks or grows it
    size_t bytes = 0;
    std::vector<uint64_t> unknown_ids;
    uint64_t used = 0;  // when it was last found or kept (a count of lookups)
  };
  static constexpr size_t kMostEntries = 4;

  // `least_bytes`: a shorter text is not kept (it costs less to make than to keep).
  explicit ListingCache(size_t least_bytes) : least_bytes_(least_bytes) {}
  ~ListingCache();
  ListingCache(const ListingCache&) = delete;
  ListingCache& operator=(const ListingCache&) = delete;

  // The listing kept for `key`, good at `stamp` and `now`; nullptr if none. Entries of
  // another stamp are dropped.
  const Entry* find(std::string_view key, uint64_t stamp, int64_t now);
  // Keeps `text` for `key` (replacing any entry of that key). False when it is not kept:
  // too short, or no memfd to be had.
  bool keep(std::string key, uint64_t stamp, int64_t valid_until, std::string_view text,
            std::vector<uint64_t> unknown_ids);
  // Appends `e`'s text to `out`; false (and `out` as it was) on a read error.
  static bool append_text(const Entry& e, std::string& out);
  size_t size() const { return entries_.size(); }

 private:
  void drop(size_t i);
  size_t least_bytes_;
  uint64_t clock_ = 0;
  std::vector<Entry> entries_;
};

// The key of a listing: who asks (the rows they may see) and the request as sent.
std::string listing_key(uint32_t uid, bool admin, std::string_view request_bytes);

}  // namespace hq::cmd
