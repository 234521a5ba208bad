#include "core/step_exchange.hpp"

#include <utility>

namespace hq {

ExchangeGather::ExchangeGather(size_t nodes) : blobs_(nodes) {}

Result<std::optional<std::vector<std::string>>> ExchangeGather::add(size_t node, uint32_t round, std::string blob) {
  if (!failure_) return failure_;
  if (node >= blobs_.size())
    return invalid("exchange: node index " + std::to_string(node) + " out of range (" +
                   std::to_string(blobs_.size()) + " nodes)");
  if (round != round_)
    return invalid("exchange: node " + std::to_string(node) + " sent round " + std::to_string(round) +
                   " during round " + std::to_string(round_));
  if (blobs_[node]) return invalid("exchange: node " + std::to_string(node) + " sent round " + std::to_string(round) + " twice");
  blobs_[node] = std::move(blob);
  if (++in_ < blobs_.size()) return std::optional<std::vector<std::string>>{};
  std::vector<std::string> all;
  all.reserve(blobs_.size());
  for (auto& b : blobs_) {
    all.push_back(std::move(*b));
    b.reset();
  }
  in_ = 0;
  ++round_;
  return std::optional<std::vector<std::string>>(std::move(all));
}

void ExchangeGather::fail(Status why) {
  if (failure_) failure_ = why ? internal("exchange failed") : std::move(why);
}

Result<uint32_t> ExchangeMember::begin() {
  if (busy_) return unavailable("exchange: round " + std::to_string(next_ - 1) + " is still under way");
  busy_ = true;
  return next_++;
}

Status ExchangeMember::end(uint32_t round) {
  if (!busy_ || round + 1 != next_)
    return invalid("exchange: an answer for round " + std::to_string(round) + " that is not under way");
  busy_ = false;
  return Status::ok();
}

}  // namespace hq
