// `hq report` / sreport: Slurm 22.05's usage reports (cluster Utilization,
// AccountUtilizationByUser, UserUtilizationByAccount, user TopUsage, job SizesByAccount).
// The command line is read here first (core/sreport), so that its errors need no
// controller; then the controller, which has the accounting store, answers with the text
// for this caller's time and UTC offset. Single-threaded.
#include <cstdlib>
#include <ctime>

#include "cmd/client/output.hpp"
#include "cmd/client/retry.hpp"
#include "cmd/commands.hpp"
#include "core/sreport.hpp"
#include "core/std_streams.hpp"
#include "core/units.hpp"

namespace hq::cmd {

int run_sreport(const Args& args) {
  std::string prog = args.empty() || args[0] != "sreport" ? "hq report" : "sreport";
  std::vector<std::string> words(args.empty() ? args.end() : args.begin() + 1, args.end());
  Time now = static_cast<Time>(std::time(nullptr));
  // HQ_REPORT_NOW (epoch seconds): report as of that time (tests; re-running a report).
  if (const char* at = std::getenv("HQ_REPORT_NOW"); at && *at) {
    auto t = parse_int(at, 0, INT64_MAX);
    if (!t) return hq::cerr() << prog << ": error: HQ_REPORT_NOW must be epoch seconds, not '" << at << "'\n", 1;
    now = *t;
  }
  int64_t offset = local_utc_offset(now);
  SreportParse p = parse_sreport(words, now, offset);
  if (!p.cmd) {
    hq::cout() << p.diag.out;
    hq::cerr() << p.diag.err;
    return p.diag.rc;
  }
  pb::Envelope env;
  pb::ReportRequest* req = env.mutable_report();
  for (const std::string& w : words) req->add_words(w);
  req->set_now(now);
  req->set_utc_offset(offset);
  std::unique_ptr<net::RpcClient> client;
  auto reply = call_with_retry(client, env);
  if (!reply) return fail(prog, reply.status());
  const pb::ReportReply& r = reply->report_reply();
  if (!r.enabled()) {
    hq::cerr() << "You are not running a supported accounting_storage plugin\n"
                 "(this cluster keeps no accounting: [accounting] storage = \"none\")\n";
    return 1;
  }
  hq::cout() << r.out();
  hq::cerr() << r.err();
  return r.rc();
}

}  // namespace hq::cmd
