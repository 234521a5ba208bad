// `hq acctmgr` / sacctmgr: accounts, users, associations, QOS and clusters in the accounting
// store. The controller runs the command (core/acctmgr) on its copy of the model and answers
// with Slurm's texts; without -i this client first asks what would change, prints it, asks
// "(N/y)" on stdin for up to 30 seconds as Slurm does, and only then commits.
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "cmd/client/acctmgr_json.hpp"
#include "cmd/client/output.hpp"
#include "cmd/client/retry.hpp"
#include "cmd/commands.hpp"
#include "core/acctmgr.hpp"
#include "core/std_streams.hpp"
#include "core/units.hpp"

namespace hq::cmd {
namespace {

constexpr char kSacctmgrUsage[] =
    "usage: hq acctmgr [OPTIONS] COMMAND ENTITY [SPECS]   (sacctmgr)\n"
    "  -i, --immediate   commit without asking      -n, --noheader   no header\n"
    "  -p, --parsable    '|' after every field      -P, --parsable2  '|' between fields\n"
    "  -s, --associations  show associations (= withassoc)   -r, --readonly  refuse changes\n"
    "  -Q, --quiet  -v, --verbose  -o, --oneliner   taken, no effect    -V, --version\n"
    "  --json            list|show as JSON (Slurm 23.11's data_parser v0.0.40 layout)\n"
    "commands: add|create, modify|update (where ... set ...), delete|remove (where ...), list|show, ping,\n"
    "          dump CLUSTER [File=NAME] (Slurm's flat file of its accounts, users and limits)\n"
    "entities: account, user, association, qos, cluster, coordinator, tres\n"
    "  e.g. hq acctmgr -i add account physics Description=\"Physics\" Organization=science\n"
    "       hq acctmgr -i add user alice Account=physics\n"
    "       hq acctmgr -i modify user alice set MaxJobs=4 QOS+=high\n"
    "       hq acctmgr -P list associations user=alice format=Cluster,Account,User,QOS\n";

struct MgrArgs {
  pb::AcctMgrRequest req;
  bool immediate = false, version = false, help = false;
};

bool json_option(const std::string& w) {
  return w == "--json" || w == "--json=v0.0.40" || w == "--json=data_parser/v0.0.40";
}

// Slurm's getopt string "hionpPQrsvV" and its long names; options may come anywhere.
int parse(const Args& args, MgrArgs& a, const std::string& prog) {
  static const std::vector<std::pair<std::string_view, char>> kLong = {
      {"--help", 'h'},     {"--immediate", 'i'}, {"--oneliner", 'o'}, {"--noheader", 'n'},
      {"--parsable", 'p'}, {"--parsable2", 'P'}, {"--quiet", 'Q'},    {"--readonly", 'r'},
      {"--associations", 's'}, {"--verbose", 'v'}, {"--version", 'V'}, {"--usage", 'h'}};
  auto apply = [&](char c) -> bool {
    switch (c) {
      case 'h': a.help = true; return true;
      case 'i': a.immediate = true; return true;
      case 'n': a.req.set_noheader(true); return true;
      case 'p': a.req.set_parsable(true); return true;
      case 'P': a.req.set_parsable2(true); return true;
      case 'r': a.req.set_readonly(true); return true;
      case 's': a.req.set_with_assoc(true); return true;
      case 'V': a.version = true; return true;
      case 'o': case 'Q': case 'v': return true;
      default: return false;
    }
  };
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& w = args[i];
    if (json_option(w)) {
      a.req.set_records(true);
    } else if (w.size() > 1 && w[0] == '-' && w[1] == '-') {
      auto hit = std::find_if(kLong.begin(), kLong.end(), [&](const auto& p) { return p.first == w; });
      if (hit == kLong.end()) {
        hq::cerr() << prog << ": unrecognized option '" << w << "'\nTry \"sacctmgr --help\" for more information\n";
        return 1;
      }
      apply(hit->second);
    } else if (w.size() > 1 && w[0] == '-' && !std::isdigit(static_cast<unsigned char>(w[1]))) {
      for (size_t k = 1; k < w.size(); ++k)
        if (!apply(w[k])) {
          hq::cerr() << prog << ": invalid option -- '" << w[k] << "'\nTry \"sacctmgr --help\" for more information\n";
          return 1;
        }
    } else {
      a.req.add_words(w);
    }
  }
  return -1;
}

// Slurm's commit_check: "(N/y): " on stdout, one answer from stdin within 30 seconds.
bool ask_commit() {
  hq::cout() << kAcctMgrCommitPrompt;
  char c = 0;
  bool answered = false;
  while (c != 'Y' && c != 'y' && c != 'N' && c != 'n' && c != '\n') {
    if (c) hq::cout() << "Y or N please\n";
    hq::cout() << "(N/y): " << std::flush;
    pollfd p{STDIN_FILENO, POLLIN, 0};
    if (poll(&p, 1, 30000) <= 0) {
      answered = false;
      break;
    }
    char got = 0;
    if (read(STDIN_FILENO, &got, 1) != 1) {
      answered = false;
      break;
    }
    answered = true;
    c = got;
    hq::cout() << "\n";
  }
  if (!answered) hq::cout() << "timeout\n";
  return answered && (c == 'y' || c == 'Y');
}

// sacctmgr dump's file, written here as Slurm's sacctmgr writes it; false (and Slurm's line)
// when it cannot be.
bool write_dump(const std::string& name, const std::string& text) {
  FILE* f = std::fopen(name.c_str(), "w");
  if (!f) {
    hq::cerr() << "Can't open file " << name << ", " << std::strerror(errno) << "\n";
    return false;
  }
  bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  ok = std::fclose(f) == 0 && ok;
  if (!ok) hq::cerr() << " Can't write to file\n";
  return ok;
}

int run_command(MgrArgs& a, const std::string& prog) {
  if (a.req.words_size() > 0 && to_lower(a.req.words(0)) == "ping") {
    pb::Envelope env;
    *env.mutable_acct_mgr() = a.req;
    env.mutable_acct_mgr()->clear_words();
    env.mutable_acct_mgr()->add_words("list");
    env.mutable_acct_mgr()->add_words("cluster");
    std::unique_ptr<net::RpcClient> client;
    auto reply = call_with_retry(client, env);
    if (!reply || !reply->acct_mgr_reply().enabled()) {
      hq::cout() << "slurmdbd(primary) at " << (reply ? reply->acct_mgr_reply().host() : "controller") << " is DOWN\n";
      return 1;
    }
    hq::cout() << "slurmdbd(primary) at " << reply->acct_mgr_reply().host() << " is UP\n";
    return 0;
  }
  a.req.set_commit(a.immediate);
  int64_t now = static_cast<int64_t>(std::time(nullptr));
  a.req.set_now(now);
  a.req.set_utc_offset(local_utc_offset(now));
  pb::Envelope env;
  *env.mutable_acct_mgr() = a.req;
  std::unique_ptr<net::RpcClient> client;
  auto reply = call_with_retry(client, env);
  if (!reply) return fail(prog, reply.status());
  const auto& r = reply->acct_mgr_reply();
  if (!r.enabled()) {
    hq::cerr() << "You are not running a supported accounting_storage plugin\n"
                 "Only 'accounting_storage/slurmdbd' is supported.\n";
    return 1;
  }
  if (a.req.records() && !r.listed().kind().empty() && r.rc() == 0) {
    // meta's "command" as sacctmgr 23.11 fills it: the words after the entity, but the last.
    std::vector<std::string> command;
    for (int i = 2; i + 1 < a.req.words_size(); ++i) command.push_back(a.req.words(i));
    auto json = acctmgr_json(r.listed(), client_meta_v40(std::move(command), r.listed().cluster()));
    if (!json) return fail(prog, json.status());
    hq::cout() << *json << std::flush;
    return 0;
  }
  hq::cout() << r.out() << std::flush;
  if (!r.file_name().empty() && !write_dump(r.file_name(), r.file_text())) return r.rc();  // Slurm's 0, as it
  hq::cerr() << r.err();
  if (!r.changed() || a.immediate) return r.rc();
  if (!ask_commit()) {
    hq::cout() << " Changes Discarded\n";
    return r.rc();
  }
  env.mutable_acct_mgr()->set_commit(true);
  auto again = call_with_retry(client, env);
  if (!again) return fail(prog, again.status());
  hq::cerr() << (again->acct_mgr_reply().rc() && again->acct_mgr_reply().err() != r.err() ? again->acct_mgr_reply().err() : "");
  return again->acct_mgr_reply().rc();
}

}  // namespace

int run_sacctmgr(const Args& args) {
  std::string prog = prog_name(args[0]);
  MgrArgs a;
  if (int rc = parse(args, a, prog); rc >= 0) return rc;
  if (a.help) return hq::cout() << kSacctmgrUsage, 0;
  if (a.version) return hq::cout() << persona_version() << "\n", 0;
  if (a.req.words_size() > 0) return run_command(a, prog);
  // No command: one per line from stdin, as sacctmgr's interactive mode reads them.
  int rc = 0;
  std::string line;
  while (std::getline(hq::cin(), line)) {
    std::vector<std::string> words;
    for (auto w : split(trim(line), ' '))
      if (!w.empty()) words.emplace_back(w);
    if (words.empty() || words[0][0] == '#') continue;
    if (words[0] == "exit" || words[0] == "quit") break;
    MgrArgs one = a;
    for (const auto& w : words) one.req.add_words(w);
    if (int r = run_command(one, prog); r) rc = r;
  }
  return rc;
}

}  // namespace hq::cmd
