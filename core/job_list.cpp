#include "core/job_list.hpp"

namespace hq {

JobList& JobList::operator=(const JobList& other) {
  if (this != &other) {
    clear();
    stale_ = true;
    off_ = false;
  }
  return *this;
}

JobList& JobList::operator=(JobList&& other) noexcept {
  if (this != &other) {
    chunks_ = std::move(other.chunks_);
    size_ = other.size_;
    removed_ = other.removed_;
    stale_ = other.stale_;
    off_ = other.off_;
    rebuilds_ = other.rebuilds_;
    user_numbers_ = std::move(other.user_numbers_);
    keys_ = std::move(other.keys_);
    key_numbers_ = std::move(other.key_numbers_);
    other.clear();
    other.stale_ = true;
  }
  return *this;
}

void JobList::clear() const {
  chunks_.clear();
  size_ = 0;
  removed_ = 0;
  key_numbers_.clear();  // (before the strings its keys view)
  keys_.clear();
}

void JobList::push(Entry e) const {
  if ((size_ & (kChunk - 1)) == 0 && (size_ >> kChunkShift) == chunks_.size())
    chunks_.push_back(std::make_unique<Entry[]>(kChunk));
  const_cast<JobList*>(this)->at(size_++) = e;
}

uint16_t JobList::user_number(const std::string& name) const {
  if (auto it = user_numbers_.find(name); it != user_numbers_.end()) return it->second;
  if (user_numbers_.size() >= kOtherUser) return kOtherUser;
  auto n = static_cast<uint16_t>(user_numbers_.size());
  user_numbers_.emplace(name, n);
  return n;
}

size_t JobList::KeyHash::operator()(const ListingKey& k) const {
  size_t h = 0;
  for (std::string_view part : {k.spec_partition, k.partition, k.account, k.qos, k.reservation, k.wckey})
    h = h * 1000003 ^ std::hash<std::string_view>{}(part);
  return h;
}

uint16_t JobList::key_number(const Job& job) const { return intern(listing_key(job)); }

uint16_t JobList::intern(const ListingKey& key) const {
  if (auto it = key_numbers_.find(key); it != key_numbers_.end()) return it->second;
  if (keys_.size() >= kOtherKey) return kOtherKey;
  const OwnedKey& owned = keys_.emplace_back(OwnedKey{std::string(key.spec_partition), std::string(key.partition),
                                                   std::string(key.account), std::string(key.qos),
                                                   std::string(key.reservation), std::string(key.wckey)});
  auto n = static_cast<uint16_t>(keys_.size() - 1);
  key_numbers_.emplace(owned.view(), n);
  return n;
}

void JobList::renumber_keys() {
  key_numbers_.clear();  // (its views are into `old`'s strings, which stay where they are)
  std::deque<OwnedKey> old = std::move(keys_);
  keys_.clear();
  std::vector<uint16_t> renumbered(old.size(), kOtherKey);
  for (size_t i = 0; i < size_; ++i) {
    Entry& e = at(i);
    if (e.key >= old.size()) {
      e.key = key_number(*e.job());  // beyond a table that was full: there may be room now
    } else {
      if (renumbered[e.key] == kOtherKey) renumbered[e.key] = intern(old[e.key].view());
      e.key = renumbered[e.key];
    }
  }
}

JobList::Entry JobList::entry_of(const Job& job) const {
  auto address = reinterpret_cast<uintptr_t>(&job);
  if (job.id.value >= kIdLimit || address >= kAddressLimit) {
    off_ = true;
    clear();
    return Entry{};
  }
  return Entry{job.id.value, user_number(job.spec.user), address, key_number(job)};
}

size_t JobList::first_after(uint64_t id) const {  // the first entry with a higher id
  size_t lo = 0, hi = size_;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (at(mid).id <= id) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

void JobList::add(const Job& job) {
  if (stale_ || off_) return;  // rebuilt at the next walk, or not kept at all
  if (size_ > 0 && at(size_ - 1).id >= job.id.value) {  // not in order (not how ids are handed out)
    stale_ = true;
    clear();
    return;
  }
  Entry e = entry_of(job);
  if (!off_) push(e);
}

void JobList::retag(const Job& job) {
  if (stale_ || off_) return;
  size_t i = first_after(job.id.value);
  if (i == 0 || at(i - 1).id != job.id.value || at(i - 1).job() != &job) return;
  Entry& e = at(i - 1);
  if (e.key < keys_.size() && keys_[e.key].view() == listing_key(job)) return;  // as it was: most events
  e.key = key_number(job);
}

void JobList::remove(JobId id) {
  if (stale_ || off_) return;
  size_t i = first_after(id.value);
  if (i == 0 || at(i - 1).id != id.value || !at(i - 1).address) return;
  at(i - 1).address = 0;
  // Compacted once more than half are gaps: a walk passes at most twice the jobs there are.
  if (++removed_ > kChunk && removed_ * 2 > size_) compact();
}

void JobList::compact() {
  size_t kept = 0;
  for (size_t i = 0; i < size_; ++i)
    if (at(i).address) at(kept++) = at(i);
  size_ = kept;
  removed_ = 0;
  chunks_.resize((size_ + kChunk - 1) >> kChunkShift);
  renumber_keys();
}

// In step: not stale, as many jobs as the map, and the last one the map's last job, id
// and record (a job replaced in the map behind its back would otherwise keep the count;
// its record may even be at the freed one's address).
bool JobList::in_step(const std::map<JobId, Job>& jobs) const {
  if (stale_ || live() != jobs.size()) return false;
  if (size_ == 0 || !at(size_ - 1).address) return true;
  const auto& [id, job] = *jobs.rbegin();
  return at(size_ - 1).id == id.value && at(size_ - 1).job() == &job;
}

void JobList::sync(const std::map<JobId, Job>& jobs) const {
  if (off_ || in_step(jobs)) return;
  ++rebuilds_;
  clear();
  stale_ = false;
  for (const auto& [id, job] : jobs) {
    Entry e = entry_of(job);
    if (off_) return;
    push(e);
  }
}

// Every cache line of the record: a listing reads fields from most of them (squeue's brief
// record alone reads 9 of its 12), and each one not asked for ahead is a miss of its own
// in turn (most of the controller's time over 5,000 jobs).
void JobList::prefetch(const Job* job) {
  constexpr uintptr_t kLine = 64;
  auto first = reinterpret_cast<uintptr_t>(job) / kLine * kLine;  // a map's node puts a record anywhere in a line
  auto last = reinterpret_cast<uintptr_t>(job) + sizeof(Job) - 1;
  for (uintptr_t line = first; line <= last; line += kLine) __builtin_prefetch(reinterpret_cast<const void*>(line));
}

}  // namespace hq
