// node_span_changes (see node_spans.hpp).
#include "core/node_spans.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

namespace hq {
namespace {

NodeSpan span_of(const Node& n, const char* state, std::string reason, uint32_t uid, Time start, Time end) {
  return NodeSpan{n.name, state, std::move(reason), uid, start, end, n.cpus, n.mem_mib, static_cast<int64_t>(n.gpus.size())};
}

// The spans `n` has open (down, drained), ending at `end` (0: still).
void add_open_spans(const Node& n, Time end, std::vector<NodeSpan>& out) {
  if (n.down) out.push_back(span_of(n, "DOWN", n.down_reason, 0, n.down_time, end));
  if (n.drain) out.push_back(span_of(n, "DRAIN", n.drain_reason, n.drain_uid, n.drain_time, end));
}

void down_changes(const Node& n, const NodeDownChanged& e, std::vector<NodeSpan>& out) {
  std::string reason = e.down ? e.reason : "";
  if (n.down == e.down && n.down_reason == reason) return;  // stale
  if (n.down) out.push_back(span_of(n, "DOWN", n.down_reason, 0, n.down_time, e.time));
  if (e.down) out.push_back(span_of(n, "DOWN", e.reason, 0, e.time, 0));
}

void drain_changes(const Node& n, const NodeDrainChanged& e, std::vector<NodeSpan>& out) {
  if (e.drain && n.drain && n.drain_reason == e.reason) return;  // stale
  if (!e.drain && !n.drain) return;
  if (n.drain) out.push_back(span_of(n, "DRAIN", n.drain_reason, n.drain_uid, n.drain_time, e.time));
  if (e.drain) out.push_back(span_of(n, "DRAIN", e.reason, e.uid, e.time, 0));
}

SreportTres span_tres(const NodeSpan& s) {
  SreportTres t{{"cpu", s.cpus}, {"mem", s.mem_mib}, {"energy", 0}, {"node", 1}, {"billing", s.cpus},
                {"fs/disk", 0},  {"vmem", 0},         {"pages", 0}};
  t["gres/gpu"] = s.gpus;
  return t;
}

}  // namespace

std::vector<NodeSpan> open_node_spans(const ClusterState& state) {
  std::vector<NodeSpan> out;
  for (const auto& [name, n] : state.nodes) add_open_spans(n, 0, out);
  return out;
}

std::vector<NodeDownSpan> node_down_spans(const std::vector<NodeSpan>& stored, const std::vector<NodeSpan>& open) {
  std::map<std::string, std::vector<const NodeSpan*>> by_node;
  std::set<std::pair<std::string, Time>> have;  // (node and state, start) of what the store has
  for (const NodeSpan& s : stored) {
    by_node[s.node].push_back(&s);
    have.insert({s.node + '\0' + s.state, s.start});
  }
  for (const NodeSpan& s : open)
    if (!have.count({s.node + '\0' + s.state, s.start})) by_node[s.node].push_back(&s);
  std::vector<NodeDownSpan> out;
  constexpr Time kOpen = INT64_MAX;
  for (auto& [node, spans] : by_node) {
    std::sort(spans.begin(), spans.end(), [](const NodeSpan* a, const NodeSpan* b) { return a->start < b->start; });
    SreportTres tres = span_tres(*spans.back());  // the node as it was last
    Time from = 0, to = -1;
    for (const NodeSpan* s : spans) {
      Time end = s->end ? s->end : kOpen;
      if (to >= 0 && s->start <= to) {
        to = std::max(to, end);
        continue;
      }
      if (to >= 0) out.push_back({from, to == kOpen ? 0 : to, false, tres});
      from = s->start, to = end;
    }
    if (to >= 0) out.push_back({from, to == kOpen ? 0 : to, false, tres});
  }
  return out;
}

std::vector<NodeSpan> node_span_changes(const ClusterState& before, const Event& event) {
  std::vector<NodeSpan> out;
  auto node = [&](const std::string& name) -> const Node* {
    auto it = before.nodes.find(name);
    return it == before.nodes.end() ? nullptr : &it->second;
  };
  if (const auto* e = std::get_if<NodeDownChanged>(&event)) {
    if (const Node* n = node(e->node)) down_changes(*n, *e, out);
  } else if (const auto* d = std::get_if<NodeDrainChanged>(&event)) {
    if (const Node* n = node(d->node)) drain_changes(*n, *d, out);
  } else if (const auto* j = std::get_if<NodeRegistered>(&event)) {
    // A node joining again while drained: drained from now (its span closed when it left).
    auto mark = before.drained.find(j->node);
    if (j->join && !j->node.empty() && !node(j->node) && mark != before.drained.end())
      out.push_back(NodeSpan{j->node, "DRAIN", mark->second.reason, mark->second.uid, j->time, 0, j->cpus, j->mem_mib,
                             static_cast<int64_t>(j->gpus.size())});
  } else if (const auto* r = std::get_if<NodeRemoved>(&event)) {
    if (const Node* n = node(r->node)) add_open_spans(*n, r->time, out);  // its open spans end with it
  }
  return out;
}

}  // namespace hq
