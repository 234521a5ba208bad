// Entry points of every subcommand. Each takes the arguments after its own name
// (args[0] is the command name as invoked) and returns the process exit code.
#pragma once
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hq::cmd {

using Args = std::vector<std::string>;

// hq's release, as `hq --version`, `scontrol version` and sinfo's VERSION print it.
#define HQ_VERSION "0.1.0"  // a literal, for text joined at compile time (`hq --version`'s line)
inline constexpr const char* kHqVersion = HQ_VERSION;
// Whether any argument after the command's name is -h or --help (a command that parses its
// arguments by hand answers help before doing anything else).
inline bool asks_help(const Args& args) {
  for (size_t i = 1; i < args.size(); ++i)
    if (args[i] == "-h" || args[i] == "--help") return true;
  return false;
}

// An unknown option of an hq command: one line naming it, in getopt's words as Slurm's
// commands print them ("PROG: unrecognized option '--x'"), and a hint; returns exit code 1.
int reject_option(const std::string& prog, const std::string& word);
// The first word after the command's name that is an option ("-x", "--x", not "-") and is
// none of `known` (a "--name=value" word counts as "--name"); nullopt when there is none.
std::optional<std::string> unknown_option(const Args& args, std::initializer_list<std::string_view> known);

int run_controller(const Args& args);
int run_node(const Args& args);
int run_accounting(const Args& args);  // hq accounting: the accounting store as a daemon
int run_submit(const Args& args);
int run_srun(const Args& args);   // hq run / srun: a job step inside an allocation
int run_salloc(const Args& args); // hq alloc / salloc: an allocation and a command in it
int run_queue(const Args& args);
int run_sacctmgr(const Args& args);  // hq acctmgr / sacctmgr: accounts, users, associations, QOS
int run_sshare(const Args& args);    // hq share / sshare: fair share by association
int run_sreport(const Args& args);   // hq report / sreport: usage reports over a window
int run_sprio(const Args& args);     // hq prio / sprio: pending jobs' priority factors
int run_sacct(const Args& args);  // hq acct / sacct: job records from the accounting store
int run_cancel(const Args& args);
int run_nodes(const Args& args);
int run_show(const Args& args);
int run_local(const Args& args);
int run_init(const Args& args);
int run_keygen(const Args& args);
int run_hostlist(const Args& args);
int run_config(const Args& args);
int run_bench(const Args& args);
int run_install_links(const Args& args);
int run_scontrol(const Args& args);
int run_node_control(const Args& args);    // hq control drain|resume|delete
int scontrol_node_update(const Args& args); // args[1]: update|delete, then NodeName=... State=... Reason=...
int scontrol_partition_update(const Args& args);  // args[1]: update, then PartitionName=... State=...
// scontrol create|update|delete reservation, show reservation, sinfo -T (cmd/client/reservations.cpp).
bool is_reservation_word(const std::string& word);  // "ReservationName=X", "res", ...
int scontrol_reservation(const Args& args);         // args[1]: create|update|delete
int show_reservations(const std::vector<std::string>& names, bool oneliner);
int run_job_control(const Args& args);  // args[0]: hold|uhold|release|requeue|requeuehold
int job_control_as(const Args& args, const std::string& prog);  // prog "scontrol": Slurm's lines
int run_suspend_control(const Args& args);  // args[0]: suspend|resume|notify (scontrol's)
int run_job_update(const Args& args);   // args[0]: update; JobId=... Key=Value...
int run_explain(const Args& args);
int run_token(const Args& args);  // hq token, scontrol token
int run_sim(const Args& args);
int bench_sched(const Args& args);
int bench_metrics(const Args& args);  // cmd/bench_sched.cpp
int bench_join(const Args& args);
int bench_steps(const Args& args);
int bench_cli(const Args& args);
int bench_accounting(const Args& args);
// `--name N` in a benchmark's arguments, else `def`.
int flag(const Args& args, const std::string& name, int def);

// Slurm names reachable through argv[0] (symlinks made by `hq install-links`).
const std::vector<std::pair<std::string, std::string>>& slurm_aliases();

}  // namespace hq::cmd
