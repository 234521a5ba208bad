#include "core/io_label.hpp"

namespace hq {

LabelledOutput::LabelledOutput(int32_t ntasks, bool labels) : labels_(labels) {
  for (int32_t top = ntasks - 1; top >= 10; top /= 10) ++width_;
}

std::string LabelledOutput::label(uint32_t task) const {
  if (!labels_) return "";
  std::string id = std::to_string(task);
  return std::string(id.size() < static_cast<size_t>(width_) ? width_ - id.size() : 0, ' ') + id + ": ";
}

std::string LabelledOutput::feed(uint32_t task, std::string_view data) {
  std::string out;
  std::string& pending = partial_[task];
  size_t start = 0;
  for (size_t nl; (nl = data.find('\n', start)) != std::string_view::npos; start = nl + 1) {
    out += label(task);
    out += pending;
    out.append(data.substr(start, nl + 1 - start));
    pending.clear();
  }
  pending.append(data.substr(start));
  constexpr size_t kLongestHeld = 4096;  // unlabelled: a line this long goes out in pieces
  if (!labels_ && pending.size() >= kLongestHeld) {
    out += pending;
    pending.clear();
  }
  return out;
}

std::string LabelledOutput::finish(uint32_t task) {
  auto it = partial_.find(task);
  if (it == partial_.end()) return "";
  std::string out = it->second.empty() ? "" : label(task) + it->second + (labels_ ? "\n" : "");
  partial_.erase(it);
  return out;
}

}  // namespace hq
