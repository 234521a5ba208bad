#include "core/topology.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "core/hostlist.hpp"
#include "core/switch_tree.hpp"

namespace hq {

namespace {

// Calls `f(topology, unit)` for each entry of a label (topology "" for the default's).
template <typename F>
void each_label_entry(std::string_view label, F&& f) {
  while (!label.empty()) {
    size_t comma = label.find(',');
    std::string_view entry = label.substr(0, comma);
    label = comma == std::string_view::npos ? std::string_view{} : label.substr(comma + 1);
    size_t colon = entry.find(':');
    if (entry.empty()) continue;
    if (colon == std::string_view::npos) f(std::string_view{}, entry);
    else f(entry.substr(0, colon), entry.substr(colon + 1));
  }
}

}  // namespace

namespace {

// Whether a label entry's topology `t` is `topo` (the default's also bare or "default").
bool entry_of(std::string_view t, std::string_view topo, bool is_default) {
  return t == topo || (is_default && (t.empty() || t == "default"));
}

}  // namespace

std::string label_unit(std::string_view label, std::string_view topo, bool is_default) {
  std::string out;
  each_label_entry(label, [&](std::string_view t, std::string_view unit) {
    if (out.empty() && entry_of(t, topo, is_default)) out = unit;
  });
  return out;
}

bool label_names_unit(std::string_view label, std::string_view unit) {
  bool found = false;
  each_label_entry(label, [&](std::string_view, std::string_view u) { found = found || u == unit; });
  return !unit.empty() && found;
}

std::string label_with_unit(std::string_view label, std::string_view topo, bool is_default, std::string_view unit) {
  std::string out;
  auto add = [&](std::string_view t, std::string_view u) {
    if (!out.empty()) out += ',';
    if (!t.empty()) out.append(t).append(":");
    out.append(u);
  };
  add(is_default ? std::string_view{} : topo, unit);
  each_label_entry(label, [&](std::string_view t, std::string_view u) {
    if (!entry_of(t, topo, is_default)) add(t, u);
  });
  return out;
}

std::string merge_labels(std::string_view label, std::string_view overrides) {
  std::string out(label);
  each_label_entry(overrides, [&](std::string_view t, std::string_view unit) {
    bool bare = t.empty() || t == "default";  // the cluster default's entry
    out = label_with_unit(out, bare ? std::string_view{} : t, bare, unit);
  });
  return out;
}

Status validate_topology(const TopologyConfig& t) {
  if (!t.present) return Status::ok();
  if (t.flat && (!t.switches.empty() || !t.blocks.empty() || !t.block_sizes.empty()))
    return invalid("topology " + t.name + ": flat = true takes no blocks, block_sizes nor switches");
  if (!t.switches.empty()) {
    if (!t.blocks.empty() || !t.block_sizes.empty()) return invalid(std::string(kBlocksOrSwitches));
    auto e = check_switches(t.switches);
    return e ? invalid(e->message) : Status::ok();
  }
  for (size_t i = 0; i < t.block_sizes.size(); ++i) {
    int32_t v = t.block_sizes[i];
    std::string bad = "Invalid BlockSizes value: " + std::to_string(v);
    if (v <= 0) return invalid(bad);
    if (i == 0) continue;
    int32_t base = t.block_sizes[0];
    bool ok = false;
    for (int32_t k = 1; k < kMaxBlockLevels && !ok; ++k) ok = int64_t{base} << k == v;
    if (!ok) return invalid(bad + " (each size after the first must be " + std::to_string(base) + " times 2, 4, ... 32768)");
    if (v <= t.block_sizes[i - 1]) return invalid(bad + " (sizes must grow)");
  }
  std::set<std::string> names;
  std::map<std::string, std::string> owner;
  for (const auto& b : t.blocks) {
    if (b.name.empty()) return invalid("[[topology.block]] needs a name");
    if (!names.insert(b.name).second) return invalid("Duplicate BlockName=" + b.name);
    if (b.nodes.empty()) return invalid("[[topology.block]] " + b.name + " has no nodes");
    for (const auto& n : b.nodes)
      if (auto [it, fresh] = owner.emplace(n, b.name); !fresh)
        return invalid("node " + n + " is in two blocks: " + it->second + " and " + b.name);
  }
  return Status::ok();
}

namespace {

// The enforced levels: the configured ones (or 1, 2, 4, 8, 16 base blocks), up to the
// first that holds every base block.
std::vector<int32_t> enforced_levels(const TopologyConfig& t, int32_t bblock, size_t nblocks) {
  std::vector<int32_t> wanted;
  if (t.block_sizes.empty()) {
    wanted = {0, 1, 2, 3, 4};
  } else {
    for (int32_t v : t.block_sizes)
      for (int32_t k = 0; k < kMaxBlockLevels; ++k)
        if (int64_t{bblock} << k == v) wanted.push_back(k);
  }
  std::vector<int32_t> out;
  for (int32_t k : wanted) {
    out.push_back(k);
    if ((size_t{1} << k) >= nblocks) break;
  }
  if (out.empty() || out.front() != 0) out.insert(out.begin(), 0);
  return out;
}

}  // namespace

BlockTopology build_block_topology(const TopologyConfig& t,
                                   const std::vector<std::pair<std::string, std::string>>& node_labels,
                                   const std::set<std::string>& moved) {
  BlockTopology topo;
  if (!t.present || !t.switches.empty() || t.flat) return topo;
  std::map<std::string, int32_t> block_of_name;
  for (const auto& b : t.blocks) {
    block_of_name.emplace(b.name, static_cast<int32_t>(topo.blocks.size()));
    TopoBlock tb;
    tb.name = b.name;
    for (const auto& n : b.nodes) tb.nodes.push_back(n);
    topo.blocks.push_back(std::move(tb));
  }
  // Labelled nodes the config places nowhere: into the block their label names.
  std::set<std::string> placed;
  for (const auto& b : t.blocks) placed.insert(b.nodes.begin(), b.nodes.end());
  std::map<std::string, std::vector<std::string>, bool (*)(const std::string&, const std::string&)> fresh(
      [](const std::string& a, const std::string& b) { return natural_less(a, b); });
  for (const auto& [name, label] : node_labels) {
    if (placed.count(name)) {
      if (!moved.count(name) || label.empty()) continue;
      for (size_t b = 0; b < t.blocks.size(); ++b)  // an operator moved it: out of its configured block
        std::erase(topo.blocks[b].nodes, name);
    }
    if (label.empty()) {
      ++topo.outside;
      continue;
    }
    if (auto it = block_of_name.find(label); it != block_of_name.end()) topo.blocks[it->second].nodes.push_back(name);
    else fresh[label].push_back(name);
  }
  for (auto& [label, nodes] : fresh) {
    TopoBlock tb;
    tb.name = label;
    tb.nodes = std::move(nodes);
    topo.blocks.push_back(std::move(tb));
  }
  if (topo.blocks.empty()) return topo;
  for (auto& b : topo.blocks) std::sort(b.nodes.begin(), b.nodes.end(), [](const auto& x, const auto& y) { return natural_less(x, y); });
  int32_t nbase = static_cast<int32_t>(topo.blocks.size());
  // The base size: BlockSizes' first, else the first configured block's count (whatever moved since).
  size_t first = t.blocks.empty() ? topo.blocks[0].nodes.size() : t.blocks[0].nodes.size();
  topo.bblock_nodes = t.block_sizes.empty() ? std::max<int32_t>(1, static_cast<int32_t>(first)) : t.block_sizes[0];
  topo.levels = enforced_levels(t, topo.bblock_nodes, static_cast<size_t>(nbase));
  topo.by_level.assign(kMaxBlockLevels, {});
  for (int32_t i = 0; i < nbase; ++i) {
    TopoBlock& b = topo.blocks[i];
    b.index = b.shown_index = i;
    b.bblocks = {i};
    b.size = topo.bblock_nodes;
    topo.by_level[0].push_back(i);
    for (const auto& n : b.nodes) topo.node_bblock.emplace(n, i);
  }
  // Aggregated blocks, level by level: aligned runs of 2^k base blocks. A shorter run at
  // the end is kept unless the level below already holds what is left (Slurm's
  // block_record_validate).
  int32_t prev_span = 1;
  for (int32_t k : topo.levels) {
    if (k == 0) continue;
    int32_t span = 1 << k;
    for (int32_t first = 0; first < nbase; first += span) {
      int32_t count = std::min(span, nbase - first);
      if (count < span && prev_span >= count) continue;
      TopoBlock agg;
      agg.level = k;
      agg.size = topo.bblock_nodes << k;
      std::vector<std::string> names;
      for (int32_t i = first; i < first + count; ++i) {
        agg.bblocks.push_back(i);
        names.push_back(topo.blocks[i].name);
        agg.nodes.insert(agg.nodes.end(), topo.blocks[i].nodes.begin(), topo.blocks[i].nodes.end());
      }
      std::sort(agg.nodes.begin(), agg.nodes.end(), [](const auto& x, const auto& y) { return natural_less(x, y); });
      agg.name = compress_hostlist(names);
      agg.index = static_cast<int32_t>(topo.blocks.size());
      topo.by_level[k].push_back(agg.index);
      topo.blocks.push_back(std::move(agg));
    }
    prev_span = span;
  }
  // BlockIndex as Slurm numbers aggregated blocks: in the order of their first base block,
  // the lower level first (made block by block, all levels at once); the lines stay by level.
  std::vector<int32_t> made;
  for (size_t i = static_cast<size_t>(nbase); i < topo.blocks.size(); ++i) made.push_back(static_cast<int32_t>(i));
  std::stable_sort(made.begin(), made.end(), [&](int32_t a, int32_t b) {
    return std::pair(topo.blocks[a].bblocks.front(), topo.blocks[a].level) < std::pair(topo.blocks[b].bblocks.front(), topo.blocks[b].level);
  });
  for (size_t n = 0; n < made.size(); ++n) topo.blocks[static_cast<size_t>(made[n])].shown_index = nbase + static_cast<int32_t>(n);
  return topo;
}

int32_t BlockTopology::level_for(int32_t nodes) const {
  if (!active() || bblock_nodes <= 0) return -1;
  int64_t needed = (std::max(1, nodes) + bblock_nodes - 1) / bblock_nodes;  // base blocks
  int32_t level = 0;
  while ((int64_t{1} << level) < needed) ++level;
  for (int32_t k : levels)
    if (k >= level && !by_level[k].empty()) return k;
  return -1;
}

std::vector<std::string> BlockTopology::show_lines() const {
  std::vector<std::string> out;
  for (const auto& b : blocks) {
    std::string nodes = compress_hostlist(b.nodes, HostlistOrder::kSorted);
    out.push_back((b.level == 0 ? "BlockName=" : "AggregatedBlock=") + b.name + " BlockIndex=" + std::to_string(b.shown_index) +
                  " Nodes=" + nodes + " BlockSize=" + std::to_string(b.size));
  }
  return out;
}

namespace {

// The value of a show line's first Key= (the block's or switch's name).
std::string_view first_value(std::string_view line) {
  size_t eq = line.find('='), sp = line.find(' ');
  if (eq == std::string_view::npos || sp == std::string_view::npos || sp < eq) return {};
  return line.substr(eq + 1, sp - eq - 1);
}

// Whether a show line's Nodes= holds every one of `names` (Slurm's hostset_within).
bool nodes_within(const std::string& line, const std::vector<std::string>& names) {
  size_t at = line.find(" Nodes=");
  if (at == std::string::npos || names.empty()) return false;
  size_t from = at + 7, end = line.find(' ', from);
  auto nodes = expand_hostlist(line.substr(from, end == std::string::npos ? std::string::npos : end - from));
  if (!nodes) return false;
  std::set<std::string> held(nodes->begin(), nodes->end());
  return std::all_of(names.begin(), names.end(), [&](const std::string& n) { return held.count(n) > 0; });
}

}  // namespace

std::vector<std::string> topology_lines_matching(const std::vector<std::string>& lines, const std::string& name) {
  for (const auto& line : lines)  // Slurm 22.05's scontrol_print_topo: a switch by its name, alone
    if (line.starts_with("SwitchName=") && first_value(line) == name) return {line};
  auto expanded = expand_hostlist(name);
  std::vector<std::string> names = expanded ? *expanded : std::vector<std::string>{name};
  std::vector<std::string> out;
  for (const auto& line : lines)
    if (first_value(line) == name || nodes_within(line, names)) out.push_back(line);
  return out;
}

}  // namespace hq
