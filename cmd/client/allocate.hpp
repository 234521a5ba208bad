// srun and salloc outside a job: asking the controller for an allocation (a job with no
// script), waiting for it with Slurm's lines ("job N queued and waiting for resources",
// "has been allocated resources", salloc's "Pending"/"Granted job allocation N"), giving
// it back (JobComplete with the exit code), and the environment a batch job of the same
// allocation would start with. Also the signal self-pipe both commands wait on.
// The holder's keepalive (InactiveLimit): salloc says it from its wait loop, srun from a
// thread of its own while the step runs (HolderKeepalive). Otherwise one thread.
#pragma once
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/job.hpp"
#include "core/status.hpp"
#include "hq.pb.h"
#include "net/client.hpp"

namespace hq::cmd {

// SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 are written to a pipe instead of
// acting; SIGPIPE is ignored. signal_fd() is the pipe's read end (-1 before catch_signals).
void catch_signals();
// SIGCHLD too goes to the pipe (salloc waits for its command on it).
void catch_child_exits();
int signal_fd();
bool signal_pending();
// The next caught signal, or 0 when none is waiting.
int next_signal();

struct AllocateOptions {
  std::string prog;        // "srun" or "salloc": the prefix of every line
  bool immediate = false;  // -I: give up when the first scheduling pass did not start it
};

struct Allocation {
  pb::AllocateReply granted;
  std::unique_ptr<net::RpcClient> client;  // kept to give the allocation back
};

// The submitter's part of an allocation's spec: this host, our uid/gid/user (for the job's
// environment: the controller takes who asks from the token) and the exported environment.
void fill_submitter(JobSpec& spec, const std::vector<std::string>& exported);

// Asks for `spec` (alloc_kind set) and waits until it starts. Every failure is printed
// (Slurm's wording) and comes back as an error whose message was already shown; a signal
// while waiting revokes the job.
Result<Allocation> request_allocation(const pb::JobSpec& spec, const AllocateOptions& opt);

// Ends the allocation with `exit_code` (a wait status's code; 128+N for a signal).
void release_allocation(Allocation& a, int exit_code, const std::string& prog);

// Tells the controller that job `job_id`'s holder is alive (AllocationAlive) over `client`
// (connected first when null; dropped when the call fails, `timeout_s` at most). Returns the
// job's state ("" when the controller cannot be asked just now, or no longer knows the
// job) and sets `keepalive_s` to when to say it again.
std::string say_alive(std::unique_ptr<net::RpcClient>& client, uint64_t job_id, int32_t& keepalive_s, double timeout_s);

// srun outside a job: while its step runs on the main thread, a thread of its own (with
// its own connection, every signal blocked) says the allocation is alive every
// keepalive_s. Destroying it stops and joins the thread (a call in flight: 5 s at most).
class HolderKeepalive {
 public:
  explicit HolderKeepalive(const Allocation& a);
  ~HolderKeepalive();
  HolderKeepalive(const HolderKeepalive&) = delete;
  HolderKeepalive& operator=(const HolderKeepalive&) = delete;

 private:
  void run();
  const uint64_t job_id_;
  int32_t every_s_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

// The allocation's environment, as a batch job's would start: SLURM_JOB_ID, SLURM_JOB_NAME,
// SLURM_JOB_NODELIST, ... (`exported`: the job's own environment, from --export).
std::vector<std::string> allocation_env(const pb::AllocateReply& a, const pb::JobSpec& spec,
                                        const std::vector<std::string>& exported);

}  // namespace hq::cmd
