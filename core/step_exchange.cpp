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

std::vector<ExchangePart> exchange_parts(const std::vector<std::string>& blobs, size_t budget) {
  std::vector<ExchangePart> parts;
  size_t first = 0;
  size_t bytes = 0;
  for (size_t i = 0; i < blobs.size(); ++i) {
    if (i > first && bytes + blobs[i].size() > budget) {
      parts.push_back({first, i});
      first = i;
      bytes = 0;
    }
    bytes += blobs[i].size();
  }
  parts.push_back({first, blobs.size()});
  return parts;
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
  parts_.clear();
  in_ = 0;
  return Status::ok();
}

Result<std::optional<std::vector<std::string>>> ExchangeMember::take(uint32_t round, size_t first, size_t total,
                                                                     std::vector<std::string> part) {
  if (!busy_ || round + 1 != next_)
    return invalid("exchange: a part of round " + std::to_string(round) + " that is not under way");
  if (total > kExchangeMaxNodes)
    return invalid("exchange: a part of round " + std::to_string(round) + " for " + std::to_string(total) + " nodes");
  if (in_ == 0 && parts_.empty()) parts_.resize(total);
  if (total != parts_.size())
    return invalid("exchange: a part of round " + std::to_string(round) + " for " + std::to_string(total) +
                   " nodes, where its first part said " + std::to_string(parts_.size()));
  if (first > total || part.size() > total - first)
    return invalid("exchange: a part for nodes " + std::to_string(first) + ".." +
                   std::to_string(first + part.size()) + " of " + std::to_string(total));
  for (size_t i = 0; i < part.size(); ++i)
    if (parts_[first + i]) return invalid("exchange: node " + std::to_string(first + i) + "'s blob came twice");
  for (size_t i = 0; i < part.size(); ++i) parts_[first + i] = std::move(part[i]);
  in_ += part.size();
  if (in_ < total) return std::optional<std::vector<std::string>>{};
  std::vector<std::string> all;
  all.reserve(total);
  for (auto& b : parts_) all.push_back(std::move(*b));
  busy_ = false;
  parts_.clear();
  in_ = 0;
  return std::optional<std::vector<std::string>>(std::move(all));
}

}  // namespace hq
