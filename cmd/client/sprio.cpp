// `hq prio` / sprio: the multifactor priority of pending jobs, factor by factor, as Slurm
// 22.05 prints it (core/sprio_format). The controller computes the factors with the same
// code the scheduler uses (age, fair share from the accounting store, job size, partition,
// QOS) and sends its weights. As in Slurm, -h is --noheader; --help and --usage print usage.
#include <algorithm>
#include <cstdlib>
#include <iostream>

#include "cmd/client/job_query.hpp"
#include "cmd/client/output.hpp"
#include "cmd/client/retry.hpp"
#include "cmd/paths.hpp"
#include "cmd/commands.hpp"
#include "core/sprio_format.hpp"
#include "core/units.hpp"

namespace hq::cmd {
namespace {

constexpr char kUsage[] =
    "Usage: sprio [OPTIONS]\n"
    "  -h, --noheader                  no headers on output\n"
    "  -j, --jobs                      comma separated list of jobs\n"
    "                                  to view, default is all\n"
    "  -l, --long                      long report\n"
    "  -n, --norm                      display normalized values\n"
    "  -o, --format=format             format specification\n"
    "  -p, --partition=partition_name  comma separated list of partitions\n"
    "  -S, --sort=sort_list            comma separated list of fields to sort on (taken, rows stay in job id order)\n"
    "  -u, --user=user_name            comma separated list of users to view\n"
    "  -v, --verbose                   verbosity level\n"
    "  -V, --version                   output version information and exit\n"
    "  -w, --weights                   show the weights for each priority factor\n"
    "\nHelp options:\n"
    "  --help                          show this help message\n"
    "  --usage                         display a brief summary of sprio options\n";

struct PrioArgs {
  SprioOptions opt;
  std::vector<std::string> jobs, users, partitions;
  bool help = false, version = false;
};

// Slurm's getopt string "hj::lM:no:p:S:u:vVw" and its long names.
bool parse(const Args& args, PrioArgs& a, const std::string& prog) {
  static const std::vector<std::pair<std::string, char>> kLong = {
      {"noheader", 'h'}, {"jobs", 'j'},  {"long", 'l'},    {"cluster", 'M'}, {"clusters", 'M'}, {"norm", 'n'},
      {"format", 'o'},   {"sort", 'S'},  {"partition", 'p'}, {"user", 'u'},  {"users", 'u'},    {"verbose", 'v'},
      {"version", 'V'},  {"weights", 'w'}, {"help", '?'},  {"usage", '?'}};
  auto take = [&](char c, const std::string& v) {
    if (c == 'j') for (auto& j : split_list(v)) a.jobs.push_back(j);
    else if (c == 'u') for (auto& u : split_list(v)) a.users.push_back(u);
    else if (c == 'p') for (auto& p : split_list(v)) a.partitions.push_back(p);
    else if (c == 'o') a.opt.format = v;
  };
  auto flag = [&](char c) {
    switch (c) {
      case 'h': a.opt.noheader = true; return true;
      case 'l': a.opt.long_list = true; return true;
      case 'n': a.opt.normalized = true; return true;
      case 'w': a.opt.weights = true; return true;
      case 'v': return true;
      case 'V': a.version = true; return true;
      case '?': a.help = true; return true;
      case 'j': a.opt.jobs_given = true; return true;
      default: return false;
    }
  };
  auto needs_value = [](char c) { return c == 'u' || c == 'p' || c == 'o' || c == 'S' || c == 'M'; };
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& w = args[i];
    if (w.rfind("--", 0) == 0) {
      std::string name = w.substr(2), v;
      bool has_value = false;
      if (size_t eq = name.find('='); eq != std::string::npos) v = name.substr(eq + 1), name.resize(eq), has_value = true;
      auto hit = std::find_if(kLong.begin(), kLong.end(), [&](const auto& p) { return p.first == name; });
      if (hit == kLong.end()) {
        std::cerr << prog << ": unrecognized option '" << w << "'\nTry \"sprio --help\" for more information\n";
        return false;
      }
      char c = hit->second;
      if (c == 'j') {  // optional argument: only as --jobs=LIST
        a.opt.jobs_given = true;
        if (has_value) take('j', v);
      } else if (needs_value(c)) {
        if (!has_value) {
          if (i + 1 >= args.size()) return std::cerr << prog << ": option '" << w << "' requires an argument\n", false;
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
      return false;
    }
    for (size_t k = 1; k < w.size(); ++k) {
      char c = w[k];
      if (c == 'j') {  // -jLIST, or -j alone (then a following word that is not an option is its list, as sprio takes it)
        a.opt.jobs_given = true;
        if (k + 1 < w.size()) take('j', w.substr(k + 1));
        else if (i + 1 < args.size() && args[i + 1][0] != '-') take('j', args[++i]);
        break;
      }
      if (needs_value(c)) {
        std::string v = k + 1 < w.size() ? w.substr(k + 1) : (i + 1 < args.size() ? args[++i] : "");
        if (v.empty() && k + 1 >= w.size()) return std::cerr << prog << ": option requires an argument -- '" << c << "'\n", false;
        take(c, v);
        break;
      }
      if (!flag(c)) {
        std::cerr << prog << ": invalid option -- '" << c << "'\nTry \"sprio --help\" for more information\n";
        return false;
      }
    }
  }
  a.opt.user_column = !a.users.empty();
  return true;
}

}  // namespace

int run_sprio(const Args& args) {
  std::string prog = args.empty() || args[0] != "sprio" ? "hq prio" : "sprio";
  PrioArgs a;
  if (!parse(args, a, prog)) return 1;
  if (a.help) return std::cout << kUsage, 0;
  if (a.version) return std::cout << "slurm-wlm 22.05.8 (hq)\n", 0;
  if (a.opt.format.empty())
    if (const char* env = std::getenv("SPRIO_FORMAT")) a.opt.format = env;
  pb::QueueRequest req;
  req.set_with_priority(true);
  req.set_state_filter("PENDING");
  for (const auto& j : a.jobs) {
    char* end = nullptr;
    unsigned long long id = std::strtoull(j.c_str(), &end, 10);
    if (j.empty() || *end != '\0' || id == 0) return std::cerr << prog << ": error: Invalid job id: " << j << "\n", 1;
    req.add_job_ids(id);
  }
  for (const auto& u : a.users) req.add_users(u);
  for (const auto& p : a.partitions) req.add_partitions(p);
  auto client = connect_client();
  if (!client) return fail(prog, client.status());
  auto reply = query_jobs(**client, req);
  if (!reply) return fail(prog, reply.status());
  std::vector<SprioJob> jobs;
  for (const pb::Job& j : reply->jobs()) {
    if (j.state() != "PENDING" || !j.has_factors()) continue;
    SprioJob s;
    s.id = j.job_id();
    s.partition = j.partition();
    s.user = j.spec().user();
    const pb::PriorityFactors& f = j.factors();
    s.age = f.age(), s.fairshare = f.fairshare(), s.job_size = f.job_size(), s.partition_factor = f.partition();
    s.qos = f.qos(), s.nice = f.nice(), s.total = f.total();
    jobs.push_back(std::move(s));
  }
  std::sort(jobs.begin(), jobs.end(), [](const SprioJob& x, const SprioJob& y) { return x.id < y.id; });
  const pb::PriorityWeightsRec& pw = reply->weights();
  SprioWeights w{pw.age(), 0, pw.fairshare(), pw.job_size(), pw.partition(), pw.qos()};
  auto text = render_sprio(jobs, w, a.opt);
  if (!text) return fail(prog, text.status());
  std::cout << *text;
  return 0;
}

}  // namespace hq::cmd
