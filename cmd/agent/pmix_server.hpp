// This agent's OpenPMIx server (srun --mpi=pmix), the only user of PMIx's headers.
// One server per agent process: PMIx_server_init cannot run twice in one process (a second
// call initialises the library again under the first), so the server starts with the first
// --mpi=pmix step on this node and lives until the agent exits. Each step is one namespace
// (Slurm's name, "slurm.pmix.<job>.<step>"), registered with all its ranks (the keys of
// reference steps-and-mpi.md §2.4-2.5) and its ranks here as clients (uid and gid checked
// when they connect), and deregistered when its tasks here end.
// Before the library starts, hwloc is told to load no plugins (a static binary must never
// dlopen a shared object: hwloc's plugins pull in the shared libc) and PMIx to keep job data
// in its own messages ("hash"), not shared-memory files that one user's clients could not
// read when the agent serves several users.
// Thread rules: every method runs on the agent's event-loop thread; start, add and remove
// block briefly while PMIx's progress thread does the work. PMIx calls the host (fence,
// abort, a client's init and finalize) on its progress thread: those callbacks copy what they are given and post it to
// the agent's loop, where `Events` run. A FenceReply may be called on the loop (PMIx's
// completion functions may be called from any thread); it must be called once.
#pragma once
#include <asio/io_context.hpp>
#include <functional>
#include <string>
#include <sys/types.h>
#include <vector>

#include "core/pmix_map.hpp"
#include "core/status.hpp"

namespace hq::cmd {

class PmixServer {
 public:
  // Ends one fence here: every node's blob, concatenated in node order, or a failure.
  using FenceReply = std::function<void(bool ok, const std::string& all)>;
  struct Events {
    // The ranks here of `nspace` entered their next collective (fences come in the same
    // order on every node) with this node's blob; `collect` when they want the data.
    std::function<void(const std::string& nspace, std::string blob, FenceReply reply)> fence;
    // A rank of `nspace` here called PMIx_Abort (MPI_Abort): the step ends with `status`.
    std::function<void(const std::string& nspace, int status, const std::string& message)> abort;
    // A rank of `nspace` here connected (PMIx_Init), or finalized (PMIx_Finalize).
    std::function<void(const std::string& nspace, uint32_t rank, bool finalized)> client;
  };

  PmixServer(asio::io_context& io, std::string dir, std::string node, Events events);
  ~PmixServer();
  PmixServer(const PmixServer&) = delete;
  PmixServer& operator=(const PmixServer&) = delete;

  // Starts the library once (`dir`: its directory, emptied); again after a success is a no-op.
  Status start();
  // Registers the step's namespace and its ranks here as the clients of uid/gid; `tmpdir` is
  // the step's directory here (PMIX_TMPDIR, PMIX_NSDIR). The variables each rank here adds
  // to its environment, in local order.
  Result<std::vector<std::vector<std::string>>> add(const PmixStepMap& map, const std::string& tmpdir, uid_t uid,
                                                     gid_t gid);
  // Forgets the namespace (its clients too).
  void remove(const std::string& nspace);

 private:
  asio::io_context& io_;
  std::string dir_, node_;
  Events events_;
  bool started_ = false;
  friend struct PmixCallbacks;
};

}  // namespace hq::cmd
