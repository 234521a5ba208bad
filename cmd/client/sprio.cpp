// `hq prio` / sprio: the multifactor priority of pending jobs, factor by factor, as Slurm
// 22.05 prints it (core/sprio_format). The controller computes the factors with the same
// code the scheduler uses (age, fair share from the accounting store, job size, partition,
// QOS) and sends its weights. As in Slurm, -h is --noheader; --help and --usage print usage.
#include <algorithm>
#include <cstdlib>

#include "cmd/client/job_query.hpp"
#include "cmd/client/output.hpp"
#include "cmd/client/persona_cli.hpp"
#include "cmd/client/retry.hpp"
#include "cmd/commands.hpp"
#include "cmd/paths.hpp"
#include "core/sprio_format.hpp"
#include "core/std_streams.hpp"
#include "core/units.hpp"

namespace hq::cmd {
namespace {

constexpr char kSprioUsage[] =
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
  std::string sort;
  TakenOptions taken;
};

// Slurm's options (getopt "hj::lM:no:p:S:u:vVw"); -h is --noheader, -j's list is optional.
std::unique_ptr<CLI::App> prio_parser(PrioArgs& a) {
  auto app = std::make_unique<CLI::App>("hq prio: pending jobs' priority factors (sprio)");
  app->set_help_flag("");  // --help and --usage print the usage (run_sprio)
  app->add_flag("-h,--noheader", a.opt.noheader, "no headers on output");
  app->add_option("-j,--jobs", a.jobs, "comma separated list of jobs to view, default is all")->expected(0, 1)->delimiter(',');
  app->add_flag("-l,--long", a.opt.long_list, "long report");
  app->add_flag("-n,--norm", a.opt.normalized, "display normalized values");
  app->add_option("-o,--format", a.opt.format, "format specification");
  app->add_option("-p,--partition", a.partitions, "comma separated list of partitions")->delimiter(',');
  app->add_option("-S,--sort", a.sort, "taken: rows stay in job id order");
  app->add_option("-u,--user,--users", a.users, "comma separated list of users to view")->delimiter(',');
  app->add_flag("-w,--weights", a.opt.weights, "show the weights for each priority factor");
  add_persona_common(*app, a.taken, "-v,--verbose", "-M,--cluster,--clusters");
  return app;
}

}  // namespace

int run_sprio(const Args& args) {
  std::string prog = args.empty() || args[0] != "sprio" ? "hq prio" : "sprio";
  if (asks_usage(args)) return hq::cout() << kSprioUsage, 0;
  PrioArgs a;
  auto app = prio_parser(a);
  if (auto done = parse_persona_args(*app, args, prog)) return *done;
  a.opt.jobs_given = app->count("-j") > 0;
  a.opt.user_column = !a.users.empty();
  if (a.opt.format.empty())
    if (const char* env = std::getenv("SPRIO_FORMAT")) a.opt.format = env;
  pb::QueueRequest req;
  req.set_with_priority(true);
  req.set_state_filter("PENDING");
  for (const auto& j : a.jobs) {
    char* end = nullptr;
    unsigned long long id = std::strtoull(j.c_str(), &end, 10);
    if (j.empty() || *end != '\0' || id == 0) return hq::cerr() << prog << ": error: Invalid job id: " << j << "\n", 1;
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
  hq::cout() << *text;
  return 0;
}

}  // namespace hq::cmd
