// Small standalone tools: `hq hostlist`, `hq init`, `hq install-links`.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "cmd/commands.hpp"
#include "cmd/config_toml.hpp"
#include "cmd/keys.hpp"
#include "cmd/process.hpp"
#include "core/cli_options.hpp"
#include "core/hostlist.hpp"
#include "core/std_streams.hpp"

namespace hq::cmd {

int reject_option(const std::string& prog, const std::string& word) {
  hq::cerr() << prog << ": " << getopt_unknown(word) << "\nTry \"" << prog << " --help\" for more information\n";
  return 1;
}

std::optional<std::string> unknown_option(const Args& args, std::initializer_list<std::string_view> known) {
  for (size_t i = 1; i < args.size(); ++i) {
    std::string_view word = args[i];
    if (word.size() < 2 || word[0] != '-') continue;
    std::string_view name = word.substr(0, word.find('='));
    if (std::find(known.begin(), known.end(), name) == known.end()) return std::string(word);
  }
  return std::nullopt;
}

const std::vector<std::pair<std::string, std::string>>& slurm_aliases() {
  static const std::vector<std::pair<std::string, std::string>> a = {
      {"sbatch", "submit"}, {"squeue", "queue"}, {"scancel", "cancel"}, {"sinfo", "nodes"}, {"scontrol", "show"},
      {"srun", "run"}, {"salloc", "alloc"}, {"sacct", "acct"}, {"sacctmgr", "acctmgr"}, {"sshare", "share"}, {"sprio", "prio"}, {"sreport", "report"}};
  return a;
}

int run_hostlist(const Args& args) {
  constexpr char kUsage[] = "usage: hq hostlist expand|compress|count|sort|uniq EXPR...\n";
  if (asks_help(args)) return hq::cout() << kUsage, 0;
  if (auto bad = unknown_option(args, {})) return reject_option("hq hostlist", *bad);
  if (args.size() < 3) return hq::cerr() << kUsage, 2;
  std::string expr;
  for (size_t i = 2; i < args.size(); ++i) expr += (expr.empty() ? "" : ",") + args[i];
  auto hosts = expand_hostlist(expr);
  if (!hosts) {
    hq::cerr() << "hq hostlist: " << hosts.status().message() << "\n";
    return 1;
  }
  const std::string& op = args[1];
  if (op == "expand") for (const auto& h : *hosts) hq::cout() << h << "\n";
  else if (op == "compress") hq::cout() << compress_hostlist(*hosts) << "\n";
  else if (op == "sort") hq::cout() << compress_hostlist(*hosts, HostlistOrder::kSorted) << "\n";
  else if (op == "uniq") hq::cout() << compress_hostlist(*hosts, HostlistOrder::kSortedUnique) << "\n";
  else if (op == "count") hq::cout() << hosts->size() << "\n";
  else {
    hq::cerr() << "hq hostlist: unknown operation '" << op << "' (expand, compress, count, sort, uniq)\n";
    return 2;
  }
  return 0;
}

int run_keygen(const Args& args) {
  if (!asks_help(args))
    if (auto bad = unknown_option(args, {"--rotate", "--retire", "--store-secret"})) return reject_option("hq keygen", *bad);
  return run_keygen_command(args);
}

// `hq config check FILE`: loads a cluster config as the controller would and says
// what it holds, or the first error with its place in the file.
int run_config(const Args& args) {
  constexpr char kUsage[] = "usage: hq config check FILE\n";
  if (asks_help(args)) return hq::cout() << kUsage, 0;
  if (auto bad = unknown_option(args, {})) return reject_option("hq config", *bad);
  if (args.size() != 3 || args[1] != "check") return hq::cerr() << kUsage, 2;
  auto cfg = load_config_file(args[2]);
  if (!cfg) {
    hq::cerr() << "hq config: " << cfg.status().message() << "\n";
    return 1;
  }
  size_t nodes = 0;
  for (const auto& n : cfg->nodes) nodes += n.names.size();
  hq::cout() << args[2] << ": ok (" << nodes << " nodes, " << cfg->partitions.size() << " partitions)\n";
  return 0;
}

int run_init(const Args& args) {
  constexpr char kUsage[] = "usage: hq init DIR   (writes DIR/config.toml, a starter config)\n";
  if (asks_help(args)) return hq::cout() << kUsage, 0;
  if (auto bad = unknown_option(args, {})) return reject_option("hq init", *bad);
  if (args.size() != 2) return hq::cerr() << kUsage, 2;
  std::string dir = args[1];
  std::filesystem::create_directories(dir);
  std::string path = dir + "/config.toml";
  if (std::filesystem::exists(path)) {
    hq::cerr() << "hq init: " << path << " already exists; not overwriting\n";
    return 1;
  }
  std::ofstream out(path);
  out << "# hq cluster config (see config.example.toml in the source for every key).\n"
         "[cluster]\nname = \"hq\"\nkeys_dir = \"" << std::filesystem::absolute(dir).string() << "/keys\"\n\n"
         "[controller]\nhost = \"0.0.0.0\"     # every interface: node agents connect from other hosts\nport = 6817\n"
         "state_dir = \"" << std::filesystem::absolute(dir).string() << "/state\"\n"
         "dynamic_nodes = true  # agents need no [[node]] entry: they join with what they probe\n\n"
         "# [[node]] entries are optional; give one to fix a node's size or GPUs:\n"
         "# [[node]]\n# names = \"gpu[01-16]\"\n# gres = \"gpu:nvidia_h100_80gb_hbm3:8\"\n\n"
         "[[partition]]\nname = \"batch\"\nnodes = \"ALL\"          # or hostlists and feature{NAME}\ndefault = true\n"
         "max_time = \"1-00:00:00\"\n";
  if (!out) {
    hq::cerr() << "hq init: cannot write " << path << "\n";
    return 1;
  }
  hq::cout() << "wrote " << path << "\n";
  return run_keygen_command({"keygen", dir + "/keys", "hq"});
}

namespace {
// Whether `path` is free for a link to hq: absent, or a link to an hq binary already.
bool ours_or_free(const std::string& path) {
  std::error_code ec;
  auto st = std::filesystem::symlink_status(path, ec);
  if (ec || !std::filesystem::exists(st)) return true;
  if (!std::filesystem::is_symlink(st)) return false;
  return std::filesystem::read_symlink(path, ec).filename() == "hq" && !ec;
}
}  // namespace

int run_install_links(const Args& args) {
  constexpr char kUsage[] =
      "usage: hq install-links [--force] DIR   (symlinks sbatch, srun, salloc, squeue, scancel, sinfo, scontrol, sacct, sacctmgr to hq;\n"
      "       a file there that is not already a link to hq is kept unless --force)\n";
  if (asks_help(args)) return hq::cout() << kUsage, 0;
  if (auto bad = unknown_option(args, {"--force"})) return reject_option("hq install-links", *bad);
  bool force = args.size() == 3 && args[1] == "--force";
  if (args.size() != 2 && !force) return hq::cerr() << kUsage, 2;
  std::string dir = args.back();
  std::string exe = self_exe();
  if (!force)  // all or nothing: no link is made while one name is another program's
    for (const auto& [name, sub] : slurm_aliases())
      if (!ours_or_free(dir + "/" + name)) {
        hq::cerr() << "hq install-links: " << dir << "/" << name
                  << " exists and is not a link to hq (Slurm's own?); nothing was changed. --force replaces it\n";
        return 1;
      }
  std::filesystem::create_directories(dir);
  for (const auto& [name, sub] : slurm_aliases()) {
    std::string link = dir + "/" + name;
    // Made beside it and renamed over it: a job's script running `srun` meanwhile finds
    // either link, never none (its shell would take the next srun on PATH, and keep it).
    std::string fresh = dir + "/." + name + ".hq-" + std::to_string(::getpid());
    std::error_code ec;
    std::filesystem::remove(fresh, ec);
    std::filesystem::create_symlink(exe, fresh, ec);
    if (!ec) std::filesystem::rename(fresh, link, ec);
    if (ec) {
      std::error_code ignored;
      std::filesystem::remove(fresh, ignored);
      hq::cerr() << "hq install-links: " << link << ": " << ec.message() << "\n";
      return 1;
    }
    hq::cout() << link << " -> " << exe << "\n";
  }
  return 0;
}

}  // namespace hq::cmd
