#include "core/pmi_mapping.hpp"

namespace hq {
namespace {

// Every rank 0..N-1 once, ascending on each node.
Status check_ranks(const std::vector<std::vector<uint32_t>>& tasks, size_t total) {
  std::vector<bool> seen(total, false);
  for (const auto& node : tasks)
    for (size_t i = 0; i < node.size(); ++i) {
      if (node[i] >= total || seen[node[i]]) return invalid("process mapping: rank " + std::to_string(node[i]) + " out of place");
      if (i > 0 && node[i] < node[i - 1]) return invalid("process mapping: ranks of a node not ascending");
      seen[node[i]] = true;
    }
  return Status::ok();
}

// How many consecutive ranks node `ranks` holds from position `from`.
size_t run_at(const std::vector<uint32_t>& ranks, size_t from) {
  size_t end = from + 1;
  while (end < ranks.size() && ranks[end] == ranks[end - 1] + 1) ++end;
  return end - from;
}

}  // namespace

Result<std::string> pmi_process_mapping(const std::vector<std::vector<uint32_t>>& tasks) {
  size_t total = 0;
  for (const auto& node : tasks) total += node.size();
  if (Status s = check_ranks(tasks, total); !s) return s;
  std::vector<size_t> next(tasks.size(), 0);  // per node: its first rank not yet mapped
  std::string out = "(vector";
  for (uint32_t rank = 0; rank < total;) {
    size_t start = 0;  // the node that holds `rank` next (every smaller rank is mapped)
    while (start < tasks.size() && (next[start] >= tasks[start].size() || tasks[start][next[start]] != rank)) ++start;
    if (start == tasks.size()) return internal("process mapping: rank " + std::to_string(rank) + " not found");
    size_t depth = run_at(tasks[start], next[start]), count = 0;
    // Following nodes join while each holds `depth` ranks that run on from the previous node's.
    for (size_t n = start; n < tasks.size(); ++n, ++count) {
      if (next[n] >= tasks[n].size() || tasks[n][next[n]] != rank || run_at(tasks[n], next[n]) != depth) break;
      next[n] += depth;
      rank += static_cast<uint32_t>(depth);
    }
    out += ",(" + std::to_string(start) + "," + std::to_string(count) + "," + std::to_string(depth) + ")";
  }
  return out + ")";
}

}  // namespace hq
