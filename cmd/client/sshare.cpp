// `hq share` / sshare: fair share by association (shares, decayed usage, effective usage,
// LevelFS, the fair-share factor) as Slurm 22.05 prints it. The controller sends every
// association of its cluster; the rows and columns asked for are chosen and printed here
// (core/sshare_format). As in Slurm, -h is --noheader; --help and --usage print the usage.
#include <unistd.h>

#include <algorithm>

#include "cmd/client/output.hpp"
#include "cmd/client/persona_cli.hpp"
#include "cmd/client/retry.hpp"
#include "cmd/client/sshare_json.hpp"
#include "cmd/commands.hpp"
#include "cmd/users.hpp"
#include "core/sshare_format.hpp"
#include "core/std_streams.hpp"
#include "core/units.hpp"

namespace hq::cmd {
namespace {

constexpr char kSshareUsage[] =
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
    "          --json           print as JSON (Slurm 23.11's layout)            \n"
    "          --help           display this usage description                  \n"
    "          --usage          display this usage description                  \n"
    "                                                                           \n";

struct ShareArgs {
  ShareOptions opt;
  std::vector<std::string> accounts, users, formats;
  bool help_format = false, json = false;
  TakenOptions taken;
};

// Slurm's options (getopt "aA:ehlmM:no:pPu:UvV"); -h is --noheader, as in Slurm.
std::unique_ptr<CLI::App> share_parser(ShareArgs& a) {
  auto app = std::make_unique<CLI::App>("hq share: fair share by association (sshare)");
  app->set_help_flag("");  // --help and --usage print Slurm's usage (run_sshare)
  app->add_flag("-a,--all", a.opt.all, "list all users");
  app->add_option("-A,--accounts", a.accounts, "display specific accounts (comma separated list)")->delimiter(',');
  app->add_flag("-e,--helpformat", a.help_format, "print the fields --format takes");
  app->add_flag("-l,--long", a.opt.long_format, "include normalized usage in output");
  app->add_flag("-m,--partition", a.opt.partitions, "print the partition part of the association");
  app->add_flag("-n,-h,--noheader", a.opt.noheader, "omit header from output");
  app->add_option("-o,--format", a.formats, "comma separated list of fields");
  app->add_flag("-p,--parsable", a.opt.parsable, "'|' delimited output with a trailing '|'");
  app->add_flag("-P,--parsable2", a.opt.parsable2, "'|' delimited output without a trailing '|'");
  app->add_option("-u,--users", a.users, "display specific users (comma separated list)")->delimiter(',');
  app->add_flag("-U,--Users", a.opt.users_only, "display only user information");
  app->add_flag("--json", a.json, "print as JSON (Slurm 23.11's data_parser v0.0.40 layout)");
  add_persona_common(*app, a.taken, "-v,--verbose", "-M,--cluster,--clusters");
  return app;
}

ShareRow from_pb(const pb::ShareRowRec& p) {
  ShareRow r;
  r.assoc = p.assoc(), r.depth = std::clamp(p.depth(), 0, 64), r.account = p.account(), r.user = p.user();
  r.partition = p.partition();
  r.raw_shares = p.raw_shares(), r.norm_shares = p.norm_shares(), r.raw_usage = p.raw_usage();
  r.norm_usage = p.norm_usage(), r.effective_usage = p.effective_usage(), r.level_fs = p.level_fs();
  r.fair_share = p.fair_share(), r.grp_tres_mins = p.grp_tres_mins(), r.tres_run_mins = p.tres_run_mins();
  r.parent = p.parent();
  for (int k = 0; k < kTresKinds && k < p.tres_usage_size(); ++k) r.used.tres[k] = p.tres_usage(k);
  for (int k = 0; k < kTresKinds && k < p.run_seconds_size(); ++k) r.run_seconds[k] = p.run_seconds(k);
  return r;
}

}  // namespace

int run_sshare(const Args& args) {
  std::string prog = args.empty() || args[0] != "sshare" ? "hq share" : "sshare";
  if (asks_usage(args)) return hq::cout() << kSshareUsage, 0;
  ShareArgs a;
  auto app = share_parser(a);
  if (auto done = parse_persona_args(*app, args, prog)) return *done;
  if (a.help_format) return hq::cout() << sshare_helpformat(), 0;
  ShareOptions& o = a.opt;
  o.accounts = a.accounts;
  o.users = a.users;
  for (const auto& f : a.formats) o.format += (o.format.empty() ? "" : ",") + f;
  o.caller = user_name(getuid());
  pb::Envelope env;
  env.mutable_share();
  std::unique_ptr<net::RpcClient> client;
  auto reply = call_with_retry(client, env);
  if (!reply) return fail(prog, reply.status());
  const pb::ShareReply& r = reply->share_reply();
  if (!r.enabled()) {
    hq::cerr() << prog << ": error: this cluster keeps no accounting ([accounting] storage = \"none\"): no fair share\n";
    return 1;
  }
  o.cluster = r.cluster();
  std::vector<ShareRow> rows;
  rows.reserve(static_cast<size_t>(r.rows_size()));
  for (const auto& p : r.rows()) rows.push_back(from_pb(p));
  if (a.json) {
    // meta's "command" as sshare 23.11 fills it: its arguments but the last.
    std::vector<std::string> command(args.begin(), args.end() - 1);
    hq::cout() << sshare_json(sshare_rows(rows, o), o.cluster, r.gpus(), client_meta_v40(std::move(command), o.cluster));
    return 0;
  }
  auto text = render_sshare(rows, o);
  if (!text) return fail(prog, text.status());
  hq::cout() << *text;
  return 0;
}

}  // namespace hq::cmd
