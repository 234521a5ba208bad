// `hq nodes` / sinfo: partitions and nodes in Slurm 22.05's layouts (the default summary,
// -N, -l, -s, -R, -o/-O formats), filtered by -p/-n/-t/-r/-d and sorted by -S
// (cmd/client/sinfo_rows), or as JSON. `hq nodes` adds GPUs in use per row.
#include <algorithm>
#include <ctime>
#include <sstream>
#include <thread>

#include "cmd/client/job_query.hpp"
#include "cmd/client/option_docs.hpp"
#include "cmd/client/output.hpp"
#include "cmd/client/persona_cli.hpp"
#include "cmd/client/reservations.hpp"
#include "cmd/client/sinfo_rows.hpp"
#include "cmd/client/slurm_json.hpp"
#include "cmd/commands.hpp"
#include "cmd/paths.hpp"
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
  TakenOptions taken;
};

// Everything sinfo takes (Slurm 22.05's options); `rest` are the arguments after the name.
std::unique_ptr<CLI::App> sinfo_parser(SinfoArgs& a) {
  auto app = std::make_unique<CLI::App>("hq nodes: partitions and nodes (sinfo)");
  app->set_help_flag("--help", "print help");
  add_persona_common(*app, a.taken, "-a,--all,--hide,--local,--federation,--noconvert", "-M,--clusters");
  add_brief_usage(*app, "sinfo");
  app->add_flag("-d,--dead", a.filter.dead_only, "only nodes that do not respond");
  app->add_flag("-r,--responding", a.filter.responding_only, "only nodes that respond");
  app->add_flag("-e,--exact", a.filter.exact, "nodes of another CPU count, memory or weight are another row");
  app->add_flag("-h,--noheader", a.noheader, "no header line");
  app->add_option("-i,--iterate", a.iterate, "print again every SECONDS")->check(CLI::Range(1, 86400));
  app->add_flag("-l,--long", a.layout.long_output, "the long layout");
  app->add_option("-n,--nodes", a.nodes, "only these nodes (a hostlist)");
  app->add_flag("-N,--Node", a.layout.node_oriented, "one line per node");
  app->add_option("-o,--format", a.format, "fields: %[.][width]letter (Slurm's letters)");
  app->add_option("-O,--Format", a.fields, "fields: name[:[.]width],... (Slurm's names)");
  app->add_option("-p,--partition", a.partitions, "only these partitions (comma-separated)");
  app->add_flag("-R,--list-reasons", a.layout.reasons, "why nodes are down or drained");
  app->add_flag("-s,--summarize", a.layout.summarize, "one line per partition");
  app->add_option("-S,--sort", a.sort, "sort keys: [+|-|#]letter,...");
  app->add_option("-t,--states", a.states, "only nodes in these states (comma-separated; & for all of)");
  app->add_flag("-T,--reservation", a.reservations, "reservations");
  app->add_flag("-v,--verbose", a.verbose, "say more");
  app->add_flag("--json", a.json, "JSON output");
  app->add_flag("--yaml", a.yaml, "YAML output (as Slurm's)");
  app->add_flag("--blocks", a.blocks, "hq: a line per block of the topology, its nodes idle, busy and out of service");
  return app;
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

std::vector<OptionDocRow> sinfo_option_docs() {
  SinfoArgs a;
  return cli11_option_docs(*sinfo_parser(a));
}

int sinfo_with(const Args& args, const std::function<Result<pb::NodesReply>(bool)>& fetch) {
  std::string prog = prog_name(args[0]);
  SinfoArgs a;
  auto app = sinfo_parser(a);
  if (auto done = parse_persona_args(*app, args, prog)) return *done;
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
