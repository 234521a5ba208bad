// The PMIx side of job steps on this node (srun --mpi=pmix): for each step with ranks here,
// its namespace in the agent's PMIx server (started at the first such step), a directory of
// its own (<run_dir>/pmix/<job>.<step>, its user's, removed with it), each rank's variables
// added to its task plan, and its ranks' fences and aborts handed to the step manager.
// PMIx completes by itself the fences of a step whose ranks are all here; those of a step
// across nodes come here in order and go through `Hooks::exchange` (an all-gather among the
// step's nodes), numbered from 0 per step.
// Runs on the agent's event-loop thread (PmixServer posts PMIx's calls to it).
#pragma once
#include <asio/io_context.hpp>
#include <functional>
#include <map>
#include <memory>
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
    // This node's blob for the step's collective `seq`; `done` with every node's blob, concatenated in node order.
    std::function<void(Key, uint32_t seq, std::string blob, Gathered done)> exchange;
    // A rank here called MPI_Abort(status): the step ends, srun exits with `status`.
    std::function<void(Key, int status, const std::string& message)> abort;
  };

  StepPmix(asio::io_context& io, std::string dir, std::string node, Hooks hooks);
  ~StepPmix();
  // The ranks here (node `here` of `layout`) join the step's namespace; each plan (same
  // order as layout[here].tasks) gets its rank's variables.
  Status attach(Key key, const std::vector<StepNode>& layout, size_t here, std::vector<TaskPlan>& plans);
  // The step's tasks here ended (or never started): its namespace and directory go.
  void detach(Key key);

 private:
  void fence(const std::string& nspace, std::string blob, std::function<void(bool, const std::string&)> reply);
  void abort(const std::string& nspace, int status, const std::string& message);
  std::string step_dir(Key key) const;

  asio::io_context& io_;
  std::string dir_, node_;
  Hooks hooks_;
  std::unique_ptr<PmixServer> server_;
  struct Attached {
    std::string nspace;
    uint32_t next_fence = 0;
  };
  std::map<Key, Attached> steps_;
  std::map<std::string, Key> by_nspace_;
};

}  // namespace hq::cmd
