// sacctmgr as Slurm 22.05 answers it, over the accounting model: add/create, modify/update,
// delete/remove and list/show of accounts, users, associations, QOS, clusters, coordinators
// and TRES, with Slurm's keyword matching (any case, Slurm's shortest prefixes), `where` and
// `set`, `format=` with widths, -n/-p/-P/-s, and Slurm's texts, messages and exit codes
// (" Nothing new added." and 1, " Nothing deleted" and 1, " Unknown option: ..."). The
// caller asks before committing unless -i (the texts are the same). Pure; thread-safe.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/acct_model.hpp"
#include "core/node_span.hpp"

namespace hq {

// A pending or running job, as the controller knows it: deleting its user's association
// (or an account above it) is refused while it is active, as slurmdbd refuses it.
struct AcctActiveJob {
  uint64_t id = 0;
  std::string cluster, account, user;
};

// What `list events` reads: the nodes' spans out of service the store keeps for `cluster`,
// the caller's time and offset from UTC (for the default window and the dates), and user
// names by uid.
struct AcctEvents {
  std::string cluster;
  std::vector<NodeSpan> spans;
  Time now = 0;
  int64_t utc_offset = 0;
  std::map<uint32_t, std::string> user_names;
};

struct AcctMgrOptions {
  bool noheader = false, parsable = false, parsable2 = false, with_assoc = false, readonly = false;
  std::vector<AcctActiveJob> active_jobs;
  AcctEvents events;  // for `list events` (acctmgr_lists_events)
  bool records = false;  // --json/--yaml: a list also gives its records (AcctMgrResult::listed)
};

// What a list selected, as records for --json/--yaml (the client lays them out): the
// entity's plural as Slurm's JSON names it ("users", "accounts", "associations", "qos",
// "clusters", "tres"), and a model holding just the records listed (associations as they
// apply, AcctModel::inherited), with the order of the associations.
struct AcctListed {
  std::string kind;
  AcctModel records;
  std::vector<uint32_t> assoc_order;  // associations listed (for users and accounts with -s, theirs)
  bool with_assoc = false;            // users and accounts: -s / WithAssoc
  bool with_coord = false;            // users and accounts: WithCoordinators
  // users and accounts: for each listed one, its coordinator entries in Slurm's order: a
  // user's accounts (direct: named with `add coordinator`; else below one that is), an
  // account's coordinators (direct: its own; else those of an account above it).
  struct Coord {
    std::string name;
    bool direct = false;
  };
  std::map<std::string, std::vector<Coord>> coords;
  // Per association listed: slurmdbd's lineage ("/", "/a/b/", then "0-user/" and
  // "partition/") and whether it is a default (a user's default account's; account rows but
  // root's).
  struct AssocFacts {
    std::string lineage;
    bool is_default = false;
  };
  std::map<uint32_t, AssocFacts> facts;
};
// The coordinator entries of user `user` (as AcctListed::coords).
std::vector<AcctListed::Coord> user_coordinates(const AcctModel& m, const std::string& user);
// The coordinator entries of account `account`.
std::vector<AcctListed::Coord> account_coordinators(const AcctModel& m, const std::string& account);

// Whether `words` are `list|show events ...`, which reads the nodes' spans (AcctEvents).
bool acctmgr_lists_events(const std::vector<std::string>& words);

// Who runs the command: admins (root, the cluster's admins, users with AdminLevel Operator or
// Administrator) may change anything; others only list.
struct AcctMgrActor {
  std::string user;
  bool admin = false;
};

struct AcctMgrResult {
  std::string out, err;  // stdout and stderr texts
  int rc = 0;
  bool changed = false;  // `model` differs from the one given: commit it (after asking)
  AcctModel model;
  std::string file_name, file_text;  // dump: the flat file the client writes (name as given)
  AcctListed listed;                 // a list with options.records
};

// Runs one command (its words after the options, e.g. {"add", "account", "physics",
// "Description=x"}).
AcctMgrResult run_acctmgr(const AcctModel& model, const std::vector<std::string>& words,
                          const AcctMgrOptions& options, const AcctMgrActor& actor);

// The prompt sacctmgr prints before committing without -i.
constexpr const char* kAcctMgrCommitPrompt = "Would you like to commit changes? (You have 30 seconds to decide)\n";

}  // namespace hq
