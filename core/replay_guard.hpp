// Remembers token nonces until their tokens expire, so each token opens at most one
// connection (a captured token cannot be replayed on another). Pure; one thread.
#pragma once
#include <map>
#include <string>

#include "core/time.hpp"

namespace hq {

class ReplayGuard {
 public:
  // True the first time `nonce` is seen; false for a replay. Prunes expired entries.
  bool first_use(const std::string& nonce, Time expires, Time now) {
    if (now - last_prune_ >= 10) prune(now);
    return seen_.emplace(nonce, expires).second;
  }
  size_t size() const { return seen_.size(); }

 private:
  void prune(Time now) {
    for (auto it = seen_.begin(); it != seen_.end();) it = it->second < now - 60 ? seen_.erase(it) : std::next(it);
    last_prune_ = now;
  }
  std::map<std::string, Time> seen_;
  Time last_prune_ = 0;
};

}  // namespace hq
