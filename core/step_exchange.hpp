// The bookkeeping of a step's all-gather ("StepExchange", cmd/agent/step_exchange.hpp): at
// the gathering node (the step's manager), which node's blob of the current round is in;
// at each node of the step, which round it is in. Rounds are numbered from 0 and run
// strictly in order: a node contributes round r+1 only after it got round r. A round's
// answer reaches a node in parts (exchange_parts) so that no frame on a peer link carries
// more than kExchangePartBytes of blobs, however many nodes the step has; a member puts the
// parts back together. Pure; one thread.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/status.hpp"

namespace hq {

// The most bytes one node may contribute to a round, and the most bytes of blobs one part
// of an answer carries (a part holds at least one blob): both well under the peer links'
// 16 MiB frame cap (net/frame.hpp), with room for the envelope.
constexpr size_t kExchangeBlobMax = 6u << 20;
constexpr size_t kExchangePartBytes = 6u << 20;
// The most nodes one exchange answer may name (a part's `total`).
constexpr size_t kExchangeMaxNodes = 1u << 16;

// Cuts a round's blobs into parts: runs [first, end) of consecutive nodes, in node order,
// each of at most `budget` bytes of blobs or a single blob. No blobs: one empty part.
struct ExchangePart {
  size_t first = 0;
  size_t end = 0;
};
std::vector<ExchangePart> exchange_parts(const std::vector<std::string>& blobs, size_t budget = kExchangePartBytes);

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
  // an error otherwise (nothing changes). For a failed round, which carries no blobs.
  Status end(uint32_t round);
  // A part of the gatherer's answer for the round under way: the blobs of nodes
  // [first, first + part.size()) of `total`. The part that completes the round gives every
  // node's blob in node order, and the round ends; before that, nullopt. An error changes
  // nothing: another round, a total that differs from the round's first part or is over
  // kExchangeMaxNodes, or a part out of range or overlapping one already in.
  Result<std::optional<std::vector<std::string>>> take(uint32_t round, size_t first, size_t total,
                                                       std::vector<std::string> part);
  bool busy() const { return busy_; }

 private:
  uint32_t next_ = 0;
  bool busy_ = false;
  std::vector<std::optional<std::string>> parts_;  // the round's answer so far, by node
  size_t in_ = 0;
};

}  // namespace hq
