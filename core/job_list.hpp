// Every job of ClusterState::jobs in id order, 16 bytes each (its id, its user as a small
// number, the record's address, its listing key as a small number), so that a listing (or
// a scheduling pass over a queue of mostly queued jobs) walks one array instead of the map:
// it passes over other users' jobs, and those whose partition, account, QOS, reservation
// or wckey a listing's filter turns down (decided once a distinct key, core/job_filter's
// ListingKey), without reading their records, and asks for the
// records it does read a few jobs ahead, where a walk of the map waits on memory once a
// node (about 20 ms for 100,000 jobs). Kept by the only two places a job comes and goes
// (apply_submitted, erase_job), and given a job's new key after each event about it
// (retag, from apply); its compaction drops the keys no job has any more (renumber_keys);
// a copy of a ClusterState starts with it empty and stale (the
// addresses would be the other map's) and it is rebuilt at its first walk, as it is
// whenever its count or its last record and the map's differ. A job id past 2^48 (which
// hq never hands out) turns it off for good: the walks are then the map's. Pure; one
// thread, like ClusterState: a walk of a const state may rebuild this cache, so two threads
// must not walk one state at once.
#pragma once
#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/job.hpp"
#include "core/job_filter.hpp"

namespace hq {

class JobList {
 public:
  JobList() = default;
  JobList(const JobList&) : stale_(true) {}
  JobList& operator=(const JobList& other);
  JobList(JobList&& other) noexcept { *this = std::move(other); }
  JobList& operator=(JobList&& other) noexcept;  // the records stay where they are; `other` is left empty and stale

  void add(const Job& job);    // a job just put in the map (any other than the highest id yet: rebuilt)
  void remove(JobId id);       // a job about to leave the map
  void retag(const Job& job);  // a job whose listing key may have changed (any event about it)

  // fn(job) for each job with an id above `after_id`, in id order, while fn returns true;
  // with `users` (names), only the jobs of those users; with `keys` (a filter that reads
  // the listing key), none whose key it turns down: fn still sees jobs the filter turns
  // down, and must test them itself. `jobs` is the map this indexes.
  template <typename Users, typename Fn>
  void for_each(const std::map<JobId, Job>& jobs, uint64_t after_id, const Users& users, Fn&& fn,
                const JobFilter* keys = nullptr) const;
  // The same, where fn(job) returns the id to go on after: the job's own (or any lower) for
  // the next job, a higher one to pass over the jobs up to it unread, kEnd to stop.
  static constexpr uint64_t kEnd = UINT64_MAX;
  template <typename Users, typename Fn>
  void walk(const std::map<JobId, Job>& jobs, uint64_t after_id, const Users& users, Fn&& fn,
            const JobFilter* keys = nullptr) const;

  size_t live() const { return size_ - removed_; }
  size_t rebuilds() const { return rebuilds_; }  // walks that had to rebuild it first
  size_t keys() const { return keys_.size(); }   // distinct listing keys numbered so far

 private:
  static constexpr uint16_t kOtherUser = 0xffff;  // beyond the table: read the job's own name
  static constexpr int kAhead = 8;                // records asked for this many jobs ahead
  static constexpr uint16_t kOtherKey = 0xffff;   // beyond the table: read the job's record
  static constexpr uint64_t kIdLimit = uint64_t{1} << 48;
  static constexpr uintptr_t kAddressLimit = uintptr_t{1} << 48;  // user space's, on x86-64 and arm64
  struct Entry {
    uint64_t id : 48;
    uint64_t user : 16;
    uint64_t address : 48;  // the record's; 0 once removed (until compacted away)
    uint64_t key : 16;
    const Job* job() const { return reinterpret_cast<const Job*>(static_cast<uintptr_t>(address)); }
  };
  static_assert(sizeof(Entry) == 16);
  // A listing key's strings, owned (the views of the map's key point into them).
  struct OwnedKey {
    std::string spec_partition, partition, account, qos, reservation, wckey;
    ListingKey view() const { return {spec_partition, partition, account, qos, reservation, wckey}; }
  };
  struct KeyHash {
    size_t operator()(const ListingKey& k) const;
  };
  // In chunks of 8 KiB, not one vector: no copy as it grows, and no more than a chunk of
  // slack (a vector's doublings, and the old buffers the heap keeps, were memory per job).
  static constexpr size_t kChunkShift = 9;
  static constexpr size_t kChunk = size_t{1} << kChunkShift;

  const Entry& at(size_t i) const { return chunks_[i >> kChunkShift][i & (kChunk - 1)]; }
  Entry& at(size_t i) { return chunks_[i >> kChunkShift][i & (kChunk - 1)]; }
  void push(Entry e) const;
  void clear() const;
  uint16_t user_number(const std::string& name) const;  // the user table is part of the cache
  uint16_t key_number(const Job& job) const;            // and so is the keys'
  uint16_t intern(const ListingKey& key) const;         // kOtherKey once the table is full
  // At each compaction: only the keys of the jobs still listed, numbered afresh (a key no
  // job has any more is dropped, so the table fills only with keys alive at once).
  void renumber_keys();
  Entry entry_of(const Job& job) const;                 // off_ set where it cannot be held
  size_t first_after(uint64_t id) const;
  bool in_step(const std::map<JobId, Job>& jobs) const;
  void sync(const std::map<JobId, Job>& jobs) const;  // rebuilt when stale or out of step
  template <typename Users>
  std::vector<uint16_t> numbers_of(const Users& users) const {
    std::vector<uint16_t> out;
    for (const auto& name : users)
      if (auto it = user_numbers_.find(name); it != user_numbers_.end()) out.push_back(it->second);
    return out;
  }
  void compact();
  static void prefetch(const Job* job);

  mutable std::vector<std::unique_ptr<Entry[]>> chunks_;
  mutable size_t size_ = 0;
  mutable size_t removed_ = 0;
  mutable bool stale_ = false;
  mutable bool off_ = false;  // an id beyond kIdLimit was met
  mutable size_t rebuilds_ = 0;
  mutable std::unordered_map<std::string, uint16_t> user_numbers_;
  mutable std::deque<OwnedKey> keys_;  // by number (a deque: the views below stay put)
  mutable std::unordered_map<ListingKey, uint16_t, KeyHash> key_numbers_;
};

template <typename Users, typename Fn>
void JobList::for_each(const std::map<JobId, Job>& jobs, uint64_t after_id, const Users& users, Fn&& fn,
                       const JobFilter* keys) const {
  walk(jobs, after_id, users, [&fn](const Job& job) { return fn(job) ? job.id.value : kEnd; }, keys);
}

template <typename Users, typename Fn>
void JobList::walk(const std::map<JobId, Job>& jobs, uint64_t after_id, const Users& users, Fn&& fn,
                   const JobFilter* keys) const {
  sync(jobs);
  if (off_) {
    for (auto it = jobs.upper_bound(JobId{after_id}); it != jobs.end();) {
      uint64_t next = it->first.value;
      if (users.empty() || users.count(it->second.spec.user)) next = fn(it->second);
      if (next == kEnd) return;
      it = next > it->first.value ? jobs.upper_bound(JobId{next}) : std::next(it);
    }
    return;
  }
  std::vector<uint16_t> wanted = numbers_of(users);
  // Each key's answer, asked the first time an entry has it: 1 passes, 0 does not, -1 not asked.
  std::vector<int8_t> key_passes(keys ? keys_.size() : 0, -1);
  auto passes = [&](const Entry& e) {
    if (!keys || e.key >= key_passes.size()) return true;  // (kOtherKey among them)
    int8_t& known = key_passes[e.key];
    if (known < 0) known = key_matches(*keys, keys_[e.key].view()) ? 1 : 0;
    return known == 1;
  };
  // Decided by the entry alone (reading the record is what it saves), but for a user
  // beyond the table.
  auto may_be_wanted = [&](const Entry& e) {
    return e.address && passes(e) &&
           (users.empty() || e.user == kOtherUser || std::find(wanted.begin(), wanted.end(), e.user) != wanted.end());
  };
  for (size_t i = first_after(after_id); i < size_; ++i) {
    if (i + kAhead < size_ && may_be_wanted(at(i + kAhead))) prefetch(at(i + kAhead).job());
    const Entry& e = at(i);
    if (!may_be_wanted(e) || (e.user == kOtherUser && !users.empty() && !users.count(e.job()->spec.user))) continue;
    uint64_t next = fn(*e.job());
    if (next == kEnd) return;
    if (next > e.id) i = first_after(next) - 1;  // the loop's step then lands on the first past `next`
  }
}

}  // namespace hq
