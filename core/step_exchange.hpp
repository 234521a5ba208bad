// The bookkeeping of a step's all-gather ("StepExchange", cmd/agent/step_exchange.hpp): at
// the gathering node (the step's manager), which node's blob of the current round is in;
// at each node of the step, which round it is in. Rounds are numbered from 0 and run
// strictly in order: a node contributes round r+1 only after it got round r. Pure; one
// thread.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/status.hpp"

namespace hq {

// At the gatherer: one blob per node of the step and round.
class ExchangeGather {
 public:
  explicit ExchangeGather(size_t nodes);
  // Node `node`'s blob for `round`. When it completes the round: every node's blob in node
  // order, and the next round begins; otherwise nullopt. An error changes nothing: a node
  // out of range, a round other than the current one, a second blob from one node, or
  // any blob after fail().
  Result<std::optional<std::vector<std::string>>> add(size_t node, uint32_t round, std::string blob);
  // The step lost a node: this round and every later one fail with `why`.
  void fail(Status why);
  uint32_t round() const { return round_; }
  size_t nodes() const { return blobs_.size(); }
  // ok until fail().
  const Status& failure() const { return failure_; }

 private:
  std::vector<std::optional<std::string>> blobs_;
  size_t in_ = 0;
  uint32_t round_ = 0;
  Status failure_;
};

// At a node of the step: one round under way at a time.
class ExchangeMember {
 public:
  // Starts the next round and returns its number; an error while one is under way.
  Result<uint32_t> begin();
  // The gatherer's answer for `round`: ok when it is the round under way (which ends),
  // an error otherwise (nothing changes).
  Status end(uint32_t round);
  bool busy() const { return busy_; }

 private:
  uint32_t next_ = 0;
  bool busy_ = false;
};

}  // namespace hq
