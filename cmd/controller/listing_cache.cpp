// ListingCache: see the header.
#include "cmd/controller/listing_cache.hpp"

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

namespace hq::cmd {
namespace {

// A sealed memfd holding `text`, or -1.
int sealed_file_of(std::string_view text) {
  int fd = ::memfd_create("hq-listing", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return -1;
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::pwrite(fd, text.data() + done, text.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      return -1;
    }
    done += static_cast<size_t>(n);
  }
  if (::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

ListingCache::~ListingCache() {
  while (!entries_.empty()) drop(entries_.size() - 1);
}

void ListingCache::drop(size_t i) {
  if (entries_[i].fd >= 0) ::close(entries_[i].fd);
  entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(i));
}

const ListingCache::Entry* ListingCache::find(std::string_view key, uint64_t stamp, int64_t now) {
  ++clock_;
  for (size_t i = entries_.size(); i-- > 0;)
    if (entries_[i].stamp != stamp) drop(i);
  for (Entry& e : entries_)
    if (e.key == key && now < e.valid_until) {
      e.used = clock_;
      return &e;
    }
  return nullptr;
}

bool ListingCache::keep(std::string key, uint64_t stamp, int64_t valid_until, std::string_view text,
                        std::vector<uint64_t> unknown_ids) {
  if (text.size() < least_bytes_) return false;
  for (size_t i = entries_.size(); i-- > 0;)
    if (entries_[i].key == key || entries_[i].stamp != stamp) drop(i);
  int fd = sealed_file_of(text);
  if (fd < 0) return false;
  if (entries_.size() >= kMostEntries) {
    auto oldest = std::min_element(entries_.begin(), entries_.end(),
                                   [](const Entry& a, const Entry& b) { return a.used < b.used; });
    drop(static_cast<size_t>(oldest - entries_.begin()));
  }
  entries_.push_back(Entry{std::move(key), stamp, valid_until, fd, text.size(), std::move(unknown_ids), ++clock_});
  return true;
}

bool ListingCache::append_text(const Entry& e, std::string& out) {
  size_t from = out.size();
  out.resize(from + e.bytes);
  size_t done = 0;
  while (done < e.bytes) {
    ssize_t n = ::pread(e.fd, out.data() + from + done, e.bytes - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      out.resize(from);
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

std::string listing_key(uint32_t uid, bool admin, std::string_view request_bytes) {
  std::string key = std::to_string(uid) + (admin ? "a:" : "u:");
  key.append(request_bytes);
  return key;
}

}  // namespace hq::cmd
