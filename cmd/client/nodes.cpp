// `hq nodes` / sinfo: partitions and nodes in Slurm 22.05's layouts (the default summary,
// -N, -l, -s, -R, -o/-O formats), filtered by -p/-n/-t/-r/-d and sorted by -S
// (cmd/client/sinfo_rows), or as JSON. `hq nodes` adds GPUs in use per row.
#include <algorithm>
#include <ctime>
#include <thread>

#include "cmd/client/job_query.hpp"
#include "cmd/client/option_docs.hpp"
#include "cmd/client/output.hpp"
#include "cmd/client/option_table.hpp"
#include "cmd/client/persona_usage.hpp"
#include "cmd/client/reservations.hpp"
#include "cmd/client/sinfo_rows.hpp"
#include "cmd/client/slurm_json.hpp"
#include "cmd/commands.hpp"
#include "cmd/paths.hpp"
#include "core/cli_options.hpp"
#include "core/hostlist.hpp"
#include "core/std_streams.hpp"
#include "core/units.hpp"

namespace hq::cmd {
namespace {

// GPUs of a row's nodes by type, "in use/total": "nvidia_h100_80gb_hbm3:4/16"; "-" for none.
std::string gpu_column(const std::vector<const pb::Node*>& nodes) {
  std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>> types;  // type -> (used, total)
  auto add = [&](const std::string& gres, bool used) {
    for (std::string_view entry : split(gres, ',')) {
      if (auto paren = entry.find('('); paren != std::string_view::npos) entry = entry.substr(0, paren);
      size_t colon = entry.rfind(':');
      if (colon == std::string_view::npos) continue;
      std::string type(entry.substr(0, colon));
      if (type.rfind("gpu:", 0) == 0) type = type.substr(4);
      else type = "gpu";
      auto n = parse_int(entry.substr(colon + 1), 0, 1 << 20);
      auto it = std::find_if(types.begin(), types.end(), [&](const auto& t) { return t.first == type; });
      if (it == types.end()) it = types.insert(types.end(), {type, {0, 0}});
      (used ? it->second.first : it->second.second) += n ? *n : 0;
    }
  };
  for (const pb::Node* n : nodes) {
    add(n->gres(), false);
    add(n->gres_used(), true);
  }
  std::string out;
  for (const auto& [type, c] : types)
    out += (out.empty() ? "" : ",") + type + ":" + std::to_string(c.first) + "/" + std::to_string(c.second);
  return out.empty() ? "-" : out;
}

struct SinfoArgs {
  SinfoOptions filter;
  SinfoLayout layout;
  std::string format, fields, sort, nodes, partitions, states;
  bool json = false, yaml = false, noheader = false, verbose = false, reservations = false;
  bool blocks = false;  // hq's: a line per base block of the topology
  int iterate = 0;
  MetaOption meta = MetaOption::kNone;  // --help, --usage or -V, where the options stop
};

using SinfoOption = CliOption<SinfoArgs>;

// A flag that sets a field of one of SinfoArgs' parts (the filter, the layout).
template <typename Part>
SinfoOption part_flag(std::string_view name, char letter, Part SinfoArgs::*part, bool Part::*field, std::string_view doc) {
  return {name, letter, false, [part, field](SinfoArgs& a, std::string_view) { return (a.*part).*field = true, Status::ok(); },
          false, doc};
}

Status set_iterate(SinfoArgs& a, std::string_view value) {
  auto seconds = parse_int(value, 1, 0x7fffffff);
  if (!seconds) return invalid("Error: invalid entry for --iterate=" + std::string(value));  // Slurm's sinfo opts.c
  a.iterate = static_cast<int>(*seconds);
  return Status::ok();
}

// sinfo's options (Slurm 22.05's src/sinfo/opts.c), read by core/cli_options' getopt-like
// parser: a table of plain functions, built once (CLI11 built two dozen options anew at
// every sinfo, and the C++ locale with them).
const std::vector<SinfoOption>& sinfo_options() {
  auto taken = [](SinfoArgs&, std::string_view) { return Status::ok(); };
  static const std::vector<SinfoOption> table = [&] {
    std::vector<SinfoOption> t;
    t.push_back(meta_option<SinfoArgs>("help", 0, MetaOption::kHelp, "print help"));
    t.push_back({"all", 'a', false, taken, false, "taken: hq is one cluster and hides no partition"});
    for (std::string_view name : {"hide", "local", "federation", "noconvert"}) t.push_back(on_line_of(t.back(), name));
    t.push_back({"clusters", 'M', true, taken, false, "taken: hq is one cluster"});
    t.push_back(alias_of(t.back(), "cluster"));
    t.push_back(meta_option<SinfoArgs>("version", 'V', MetaOption::kVersion, "print the version"));
    t.push_back(meta_option<SinfoArgs>("usage", 0, MetaOption::kUsage, "print a brief usage"));
    t.push_back(part_flag("dead", 'd', &SinfoArgs::filter, &SinfoOptions::dead_only, "only nodes that do not respond"));
    t.push_back(part_flag("responding", 'r', &SinfoArgs::filter, &SinfoOptions::responding_only, "only nodes that respond"));
    t.push_back(part_flag("exact", 'e', &SinfoArgs::filter, &SinfoOptions::exact,
                          "nodes of another CPU count, memory or weight are another row"));
    t.push_back(flag_option("noheader", 'h', &SinfoArgs::noheader, "no header line"));
    t.push_back({"iterate", 'i', true, set_iterate, false, "print again every SECONDS"});
    t.push_back(part_flag("long", 'l', &SinfoArgs::layout, &SinfoLayout::long_output, "the long layout"));
    t.push_back(text_option("nodes", 'n', &SinfoArgs::nodes, "only these nodes (a hostlist)"));
    t.push_back(part_flag("Node", 'N', &SinfoArgs::layout, &SinfoLayout::node_oriented, "one line per node"));
    t.push_back(text_option("format", 'o', &SinfoArgs::format, "fields: %[.][width]letter (Slurm's letters)"));
    t.push_back(text_option("Format", 'O', &SinfoArgs::fields, "fields: name[:[.]width],... (Slurm's names)"));
    t.push_back(text_option("partition", 'p', &SinfoArgs::partitions, "only these partitions (comma-separated)"));
    t.push_back(part_flag("list-reasons", 'R', &SinfoArgs::layout, &SinfoLayout::reasons, "why nodes are down or drained"));
    t.push_back(part_flag("summarize", 's', &SinfoArgs::layout, &SinfoLayout::summarize, "one line per partition"));
    t.push_back(text_option("sort", 'S', &SinfoArgs::sort, "sort keys: [+|-|#]letter,..."));
    t.push_back(text_option("states", 't', &SinfoArgs::states, "only nodes in these states (comma-separated; & for all of)"));
    t.push_back(flag_option("reservation", 'T', &SinfoArgs::reservations, "reservations"));
    t.push_back(flag_option("verbose", 'v', &SinfoArgs::verbose, "say more"));
    t.push_back(flag_option("json", 0, &SinfoArgs::json, "JSON output"));
    t.push_back(flag_option("yaml", 0, &SinfoArgs::yaml, "YAML output (as Slurm's)"));
    t.push_back(flag_option("blocks", 0, &SinfoArgs::blocks,
                            "hq: a line per block of the topology, its nodes idle, busy and out of service"));
    // Slurm 22.05's order (as its getopt lists them); --blocks is hq's own.
    rank_as_slurm(t, {"all", "dead", "exact", "federation", "help", "hide", "iterate", "json", "local", "long",
                      "list-reasons", "cluster", "clusters", "nodes", "noconvert", "noheader", "Node", "format",
                      "Format", "partition", "responding", "reservation", "summarize", "sort", "states", "usage",
                      "verbose", "version", "yaml"});
    return t;
  }();
  return table;
}

std::string sinfo_help() {
  return option_help("Usage: sinfo [OPTIONS]   (hq answers as Slurm's sinfo; docs/slurm-compat.md)",
                     option_lines(sinfo_options()));
}

// sinfo's words into `a`, as getopt reads them: bundles spelled out, the options in order;
// a word that is no option's value is ignored, as Slurm's sinfo ignores it. An exit code
// when sinfo is done (help, an error), nullopt when it goes on.
std::optional<int> parse_sinfo_args(SinfoArgs& a, const Args& args, const std::string& prog) {
  std::vector<std::string> words = expand_short_bundles(sinfo_options(), args);
  for (size_t i = 1; i < words.size(); ++i) {
    if (words[i] == "--") break;
    if (words[i].size() < 2 || words[i][0] != '-') continue;
    Status s = apply_cli_option(sinfo_options(), words, i, a);
    if (a.meta != MetaOption::kNone) return answer_meta_option(a.meta, "sinfo", sinfo_help());
    if (!s) return option_failure(prog, s);
  }
  return std::nullopt;
}

Status resolve(SinfoArgs& a) {
  a.filter.node_oriented = a.layout.node_oriented;
  a.filter.reasons = a.layout.reasons;
  a.filter.partitions = split_list(a.partitions);
  if (!a.nodes.empty()) {
    auto names = expand_hostlist(a.nodes);
    if (!names) return invalid("Invalid node name specified: " + a.nodes);
    a.filter.nodes = std::set<std::string>(names->begin(), names->end());
  }
  std::string states = a.states.empty() && a.layout.reasons ? "down,fail,drain" : a.states;
  if (!states.empty()) {
    auto f = parse_sinfo_states(states);
    if (!f) return f.status();
    a.filter.states = *f;
  }
  return Status::ok();
}

// --blocks: a line per base block, then the fragmentation score.
void print_blocks(const pb::NodesReply& r, bool header) {
  if (r.blocks_size() == 0) {
    hq::cout() << "No topology information available\n";
    return;
  }
  size_t name_w = 5, nodes_w = 5;
  for (const auto& b : r.blocks()) name_w = std::max(name_w, b.name().size()), nodes_w = std::max(nodes_w, b.nodes().size());
  auto line = [&](const std::string& name, const std::string& nodes, const std::string& total, const std::string& idle,
                  const std::string& busy, const std::string& out) {
    char buf[64];
    std::snprintf(buf, sizeof buf, " %5s %5s %5s %7s\n", total.c_str(), idle.c_str(), busy.c_str(), out.c_str());
    hq::cout() << name << std::string(name_w - name.size() + 1, ' ') << nodes << std::string(nodes_w - nodes.size(), ' ')
              << buf;
  };
  if (header) line("BLOCK", "NODES", "TOTAL", "IDLE", "BUSY", "UNAVAIL");
  for (const auto& b : r.blocks())
    line(b.name(), b.nodes(), std::to_string(b.total()), std::to_string(b.idle()), std::to_string(b.busy()),
         std::to_string(b.unavailable()));
  hq::cout() << "Fragmentation=" << r.fragmentation() << " (Slurm's topology/block score: 0 when every block is whole and idle)\n";
}

void print_once(const pb::NodesReply& r, const SinfoArgs& a, const ColumnFormat& format, bool defaults,
                bool gpus) {
  if (!a.noheader && (a.iterate || a.verbose || a.layout.long_output)) print_date();
  if (a.reservations) {
    hq::cout() << reservation_table(r, !a.noheader);
    return;
  }
  if (a.blocks) return print_blocks(r, !a.noheader);
  auto rows = sinfo_rows(r, format, a.filter);
  sort_sinfo_rows(rows, !a.sort.empty() ? a.sort : a.layout.node_oriented ? "N" : "#P,-t");
  SinfoExtra extra;
  if (gpus)  // hq nodes: GPUs in use per row
    extra = [](const SinfoRow* row) { return row ? gpu_column(row->nodes) : std::string("GPUS(USED/TOTAL)"); };
  print_sinfo(rows, format, r.cluster(), !a.noheader, defaults, defaults && (a.layout.node_oriented || gpus), extra);
}

}  // namespace

std::vector<OptionDocRow> sinfo_option_docs() { return option_doc_rows(option_lines(sinfo_options())); }
std::string sinfo_prefix_answer(std::string_view prefix) { return getopt_prefix_answer(sinfo_options(), prefix); }

int sinfo_with(const Args& args, const std::function<Result<pb::NodesReply>(bool)>& fetch) {
  std::string prog = prog_name(args[0]);
  SinfoArgs a;
  if (auto done = parse_sinfo_args(a, args, prog)) return *done;
  if (a.layout.long_output && !a.format.empty()) {  // Slurm's fatal()
    hq::cerr() << prog << ": fatal: Options -o(--format) and -l(--long) are mutually exclusive. Please remove one and retry.\n";
    return 1;
  }
  if (Status s = resolve(a); !s) {
    for (std::string_view line : split(s.message(), '\n')) hq::cerr() << prog << ": error: " << line << "\n";
    return 1;
  }
  bool defaults = a.format.empty() && a.fields.empty();
  ColumnFormat format = !a.format.empty()   ? parse_sinfo_format(a.format)
                        : !a.fields.empty() ? parse_sinfo_fields(a.fields)
                                            : parse_sinfo_fields(sinfo_default_fields(a.layout));
  for (const auto& e : format.errors) hq::cerr() << (a.format.empty() ? prog + ": error: " : "") << e << "\n";
  for (;;) {
    auto reply = fetch(a.blocks);
    if (!reply) return fail(prog, reply.status());
    const pb::NodesReply& r = *reply;
    if ((a.json || a.yaml) && prog == "sinfo")  // Slurm's shape
      return hq::cout() << (a.yaml ? sinfo_slurm_yaml(r) : sinfo_slurm_json(r)), 0;
    if (a.json || a.yaml) return (a.yaml ? print_yaml(r) : print_json(r)) ? 0 : 1;  // hq nodes --json: hq's records
    bool gpus = prog != "sinfo" && defaults && !a.layout.long_output && !a.layout.summarize && !a.layout.reasons &&
                !a.layout.node_oriented &&
                std::any_of(r.nodes().begin(), r.nodes().end(), [](const pb::Node& n) { return n.gpus() > 0; });
    print_once(r, a, format, defaults, gpus);
    if (!a.iterate) return 0;
    hq::cout() << "\n" << std::flush;
    std::this_thread::sleep_for(std::chrono::seconds(a.iterate));
  }
}

int run_nodes(const Args& args) {
  std::unique_ptr<net::RpcClient> client;
  return sinfo_with(args, [&](bool with_topology) -> Result<pb::NodesReply> {
    if (!client) {
      auto c = connect_client();
      if (!c) return c.status();
      client = std::move(c.value());
    }
    return query_nodes(*client, false, with_topology);
  });
}

}  // namespace hq::cmd
