// `hq share` / sshare: fair share by association (shares, decayed usage, effective usage,
// LevelFS, the fair-share factor) as Slurm 22.05 prints it. The controller sends every
// association of its cluster; the rows and columns asked for are chosen and printed here
// (core/sshare_format). As in Slurm, -h is --noheader; --help and --usage print the usage.
#include <unistd.h>

#include <algorithm>
#include <iostream>

#include "cmd/client/output.hpp"
#include "cmd/client/retry.hpp"
#include "cmd/commands.hpp"
#include "cmd/users.hpp"
#include "core/sshare_format.hpp"
#include "core/units.hpp"

namespace hq::cmd {
namespace {

constexpr char kUsage[] =
    "Usage:  sshare [OPTION]                                                    \n"
    "  Valid OPTIONs are:                                                       \n"
    "    -a or --all            list all users                                  \n"
    "    -A or --accounts=      display specific accounts (comma separated list)\n"
    "    -e or --helpformat     Print a list of fields that can be specified    \n"
    "                           with the '--format' option                      \n"
    "    -l or --long           include normalized usage in output              \n"
    "    -m or --partition      print the partition part of the association     \n"
    "    -M or --cluster=names  clusters to issue commands to.                  \n"
    "                           NOTE: SlurmDBD must be up.                      \n"
    "    -n or --noheader       omit header from output                         \n"
    "    -o or --format=        Comma separated list of fields (use             \n"
    "                           \"--helpformat\" for a list of available fields).\n"
    "    -p or --parsable       '|' delimited output with a trailing '|'        \n"
    "    -P or --parsable2      '|' delimited output without a trailing '|'     \n"
    "    -u or --users=         display specific users (comma separated list)   \n"
    "    -U or --Users          display only user information                   \n"
    "    -v or --verbose        display more information                        \n"
    "    -V or --version        display tool version number                     \n"
    "          --help           display this usage description                  \n"
    "          --usage          display this usage description                  \n"
    "                                                                           \n";

enum class Next { kRun, kHelp, kHelpFormat, kVersion, kBad };

// Slurm's getopt string "aA:ehlmM:no:pPu:UvV" and its long names.
Next parse(const Args& args, ShareOptions& o, const std::string& prog) {
  auto value = [&](size_t& i, const std::string& w, size_t at) -> std::optional<std::string> {
    if (at < w.size()) return w.substr(at);
    if (i + 1 < args.size()) return args[++i];
    std::cerr << prog << ": option requires an argument -- '" << w[at - 1] << "'\n";
    return std::nullopt;
  };
  auto take = [&](char c, const std::string& v) {
    if (c == 'A') for (auto& a : split_list(v)) o.accounts.push_back(a);
    else if (c == 'u') for (auto& u : split_list(v)) o.users.push_back(u);
    else if (c == 'o') o.format += (o.format.empty() ? "" : ",") + v;
  };
  auto flag = [&](char c) -> bool {
    switch (c) {
      case 'a': o.all = true; return true;
      case 'l': o.long_format = true; return true;
      case 'm': o.partitions = true; return true;
      case 'n': case 'h': o.noheader = true; return true;
      case 'p': o.parsable = true; return true;
      case 'P': o.parsable2 = true; return true;
      case 'U': o.users_only = true; return true;
      case 'v': return true;
      default: return false;
    }
  };
  static const std::vector<std::pair<std::string, char>> kLong = {
      {"all", 'a'}, {"accounts", 'A'}, {"helpformat", 'e'}, {"long", 'l'}, {"partition", 'm'}, {"cluster", 'M'},
      {"clusters", 'M'}, {"noheader", 'n'}, {"format", 'o'}, {"parsable", 'p'}, {"parsable2", 'P'}, {"users", 'u'},
      {"Users", 'U'}, {"verbose", 'v'}, {"version", 'V'}, {"help", '?'}, {"usage", '?'}};
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& w = args[i];
    if (w.rfind("--", 0) == 0) {
      std::string name = w.substr(2), v;
      bool has_value = false;
      if (size_t eq = name.find('='); eq != std::string::npos) v = name.substr(eq + 1), name.resize(eq), has_value = true;
      auto hit = std::find_if(kLong.begin(), kLong.end(), [&](const auto& p) { return p.first == name; });
      if (hit == kLong.end()) {
        std::cerr << prog << ": unrecognized option '" << w << "'\nTry \"sshare --help\" for more information\n";
        return Next::kBad;
      }
      char c = hit->second;
      if (c == '?') return Next::kHelp;
      if (c == 'e') return Next::kHelpFormat;
      if (c == 'V') return Next::kVersion;
      if (c == 'A' || c == 'u' || c == 'o' || c == 'M') {
        if (!has_value) {
          if (i + 1 >= args.size()) return std::cerr << prog << ": option '" << w << "' requires an argument\n", Next::kBad;
          v = args[++i];
        }
        take(c, v);
      } else {
        flag(c);
      }
      continue;
    }
    if (w.size() < 2 || w[0] != '-') {
      std::cerr << prog << ": error: Unknown arguments: " << w << "\n";
      return Next::kBad;
    }
    for (size_t k = 1; k < w.size(); ++k) {
      char c = w[k];
      if (c == 'e') return Next::kHelpFormat;
      if (c == 'V') return Next::kVersion;
      if (c == 'A' || c == 'u' || c == 'o' || c == 'M') {
        auto v = value(i, w, k + 1);
        if (!v) return Next::kBad;
        take(c, *v);
        break;
      }
      if (!flag(c)) {
        std::cerr << prog << ": invalid option -- '" << c << "'\nTry \"sshare --help\" for more information\n";
        return Next::kBad;
      }
    }
  }
  return Next::kRun;
}

ShareRow from_pb(const pb::ShareRowRec& p) {
  ShareRow r;
  r.assoc = p.assoc(), r.depth = std::clamp(p.depth(), 0, 64), r.account = p.account(), r.user = p.user();
  r.partition = p.partition();
  r.raw_shares = p.raw_shares(), r.norm_shares = p.norm_shares(), r.raw_usage = p.raw_usage();
  r.norm_usage = p.norm_usage(), r.effective_usage = p.effective_usage(), r.level_fs = p.level_fs();
  r.fair_share = p.fair_share(), r.grp_tres_mins = p.grp_tres_mins(), r.tres_run_mins = p.tres_run_mins();
  return r;
}

}  // namespace

int run_sshare(const Args& args) {
  std::string prog = args.empty() || args[0] != "sshare" ? "hq share" : "sshare";
  ShareOptions o;
  switch (parse(args, o, prog)) {
    case Next::kHelp: return std::cout << kUsage, 0;
    case Next::kHelpFormat: return std::cout << sshare_helpformat(), 0;
    case Next::kVersion: return std::cout << "slurm-wlm 22.05.8 (hq)\n", 0;
    case Next::kBad: return 1;
    case Next::kRun: break;
  }
  o.caller = user_name(getuid());
  pb::Envelope env;
  env.mutable_share();
  std::unique_ptr<net::RpcClient> client;
  auto reply = call_with_retry(client, env);
  if (!reply) return fail(prog, reply.status());
  const pb::ShareReply& r = reply->share_reply();
  if (!r.enabled()) {
    std::cerr << prog << ": error: this cluster keeps no accounting ([accounting] storage = \"none\"): no fair share\n";
    return 1;
  }
  o.cluster = r.cluster();
  std::vector<ShareRow> rows;
  rows.reserve(static_cast<size_t>(r.rows_size()));
  for (const auto& p : r.rows()) rows.push_back(from_pb(p));
  auto text = render_sshare(rows, o);
  if (!text) return fail(prog, text.status());
  std::cout << *text;
  return 0;
}

}  // namespace hq::cmd
