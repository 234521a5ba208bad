// The PMIx side of job steps on this node (srun --mpi=pmix): for each step with ranks here,
// its namespace in the agent's PMIx server (started at the first such step), a directory of
// its own (<run_dir>/pmix/<job>.<step>, its user's, removed with it), each rank's variables
// added to its task plan, its ranks' fences and aborts handed to the step manager, and which
// ranks connected and finalized (a rank that ends in between ends its step).
// PMIx completes by itself the fences of a step whose ranks are all here; those of a step
// across nodes come here one at a time, in the same order on every node, and go through
// `Hooks::exchange` (the step's all-gather among its nodes, StepExchange).
// Runs on the agent's event-loop thread (PmixServer posts PMIx's calls to it).
#pragma once
#include <asio/io_context.hpp>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/status.hpp"
#include "core/step_layout.hpp"

namespace hq::cmd {

class PmixServer;
struct TaskPlan;

class StepPmix {
 public:
  using Key = std::pair<uint64_t, uint32_t>;  // job, step
  using Gathered = std::function<void(Status, const std::string& all)>;
  struct Hooks {
    // This node's blob for the step's next collective; `done` with every node's blob, concatenated in node order.
    std::function<void(Key, std::string blob, Gathered done)> exchange;
    // A rank here called MPI_Abort(status): the step ends, srun exits with `status`.
    std::function<void(Key, int status)> abort;
  };

  StepPmix(asio::io_context& io, std::string dir, std::string node, Hooks hooks);
  ~StepPmix();
  // The ranks here (node `here` of `layout`) join the step's namespace; each plan (same
  // order as layout[here].tasks) gets its rank's variables.
  Status attach(Key key, const std::vector<StepNode>& layout, size_t here, std::vector<TaskPlan>& plans);
  // The step's tasks here ended (or never started): its namespace and directory go.
  void detach(Key key);
  // Task `rank` here ended after PMIx_Init without PMIx_Finalize (it crashed, or left
  // without MPI_Finalize): its step should end (as mpirun would).
  bool lost(Key key, uint32_t rank) const;

 private:
  void fence(const std::string& nspace, std::string blob, std::function<void(bool, const std::string&)> reply);
  void abort(const std::string& nspace, int status);
  void client(const std::string& nspace, uint32_t rank, bool finalized);
  std::string step_dir(Key key) const;

  asio::io_context& io_;
  std::string dir_, node_;
  Hooks hooks_;
  std::unique_ptr<PmixServer> server_;
  struct Attached {
    std::string nspace;
    std::set<uint32_t> connected, finalized;  // ranks here
  };
  std::map<Key, Attached> steps_;
  std::map<std::string, Key> by_nspace_;
};

}  // namespace hq::cmd
