#include "core/node.hpp"

#include <utility>

namespace hq {

std::string node_state_name(const Node& n) {
  if (n.down) return n.drain ? "DOWN+DRAIN" : "DOWN";
  if (n.drain) return n.jobs.empty() ? "DRAINED" : "DRAINING";
  if (!n.registered) return "UNKNOWN";
  if (n.alloc_cpus == 0 && n.jobs.empty()) return "IDLE";
  if (n.alloc_cpus >= n.cpus) return "ALLOCATED";
  return "MIXED";
}

bool node_schedulable(const Node& n) { return n.registered && n.responding && !n.down && !n.drain; }

const std::string& node_reason(const Node& n) {
  static const std::string kNone;
  if (n.drain && !n.drain_reason.empty()) return n.drain_reason;
  return n.down ? n.down_reason : kNone;
}

std::vector<NodeGpu> gpus_from_gres(const std::vector<GresCount>& gres) {
  std::vector<NodeGpu> out;
  for (const auto& g : gres)
    for (int32_t i = 0; i < g.count; ++i) out.push_back({g.type, ""});
  return out;
}

Result<std::vector<NodeGpu>> reconcile_gpus(const std::vector<GresCount>& configured, const std::vector<NodeGpu>& found) {
  if (found.size() > static_cast<size_t>(kMaxNodeGpus))
    return invalid("reported " + std::to_string(found.size()) + " GPUs; at most " + std::to_string(kMaxNodeGpus));
  std::vector<char> claimed(found.size(), 0);
  // Typed entries first, so an untyped entry does not take GPUs a typed one needs.
  for (bool typed : {true, false}) {
    for (const GresCount& want : configured) {
      if (want.type.empty() == typed) continue;
      int32_t got = 0;
      for (size_t i = 0; i < found.size() && got < want.count; ++i)
        if (!claimed[i] && (want.type.empty() || found[i].type == want.type)) claimed[i] = 1, ++got;
      if (got < want.count)
        return invalid("gres/gpu count reported lower than configured: found " + std::to_string(got) + " " +
                       (want.type.empty() ? std::string("GPU(s)") : want.type) + ", configured " +
                       std::to_string(want.count));
    }
  }
  return found;
}

namespace {

// (type, count, indices) per type in order of first appearance; `used_only` counts GPUs in use.
std::string gres_text(const Node& n, bool used_only) {
  std::vector<std::pair<std::string, std::vector<int32_t>>> types;
  for (size_t i = 0; i < n.gpus.size(); ++i) {
    size_t t = 0;
    while (t < types.size() && types[t].first != n.gpus[i].type) ++t;
    if (t == types.size()) types.push_back({n.gpus[i].type, {}});
    bool used = i < n.gpu_used.size() && n.gpu_used[i];
    if (!used_only || used) types[t].second.push_back(static_cast<int32_t>(i));
  }
  std::string out;
  for (const auto& [type, idx] : types) {
    if (!out.empty()) out += ',';
    out += gres_entry(type, static_cast<int32_t>(idx.size()));
    if (used_only) out += "(IDX:" + (idx.empty() ? std::string("N/A") : format_cpulist(idx)) + ")";
  }
  return out;
}

}  // namespace

std::string node_gres(const Node& n) { return gres_text(n, false); }
std::string node_gres_used(const Node& n) { return gres_text(n, true); }

bool controller_down_reason(const std::string& reason) {
  auto starts = [&](std::string_view p) { return reason.compare(0, p.size(), p) == 0; };
  // reconcile_gpus' refusals, and a silent node's
  return reason == kNotResponding || starts("gres/gpu count reported lower than configured") ||
         (starts("reported ") && reason.find(" GPUs; at most ") != std::string::npos);
}

}  // namespace hq
