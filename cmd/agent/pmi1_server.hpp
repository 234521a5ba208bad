// The PMI-1 "simple" server for the tasks of one job step on this node (srun --mpi=pmi2,
// what MPICH speaks): one socketpair per task, whose other end the task inherits as its
// descriptor 3 with PMI_FD=3, PMI_RANK, PMI_SIZE and PMI_JOBID in its environment. Lines
// are answered by core/pmi_simple; a barrier runs the step's all-gather (StepExchange)
// with this node's puts; an abort goes to `on_abort`. A line longer than kPmiMaxLine ends
// that task's conversation (its socket is closed); nothing a task sends can harm the agent.
// Lifetime: prepare() before the tasks are forked, started() after; stop() (or the tasks'
// ends) closes every socket. Runs on the agent's event-loop thread.
#pragma once
#include <asio/awaitable.hpp>
#include <asio/io_context.hpp>
#include <asio/local/stream_protocol.hpp>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cmd/agent/task_launch.hpp"
#include "core/pmi_simple.hpp"
#include "core/status.hpp"

namespace hq::cmd {

class StepExchange;

class Pmi1Server : public std::enable_shared_from_this<Pmi1Server> {
 public:
  using OnAbort = std::function<void(int exit_code)>;

  // A server for `plans` (this node's tasks, in local order, with global ranks `ranks`):
  // each plan gets its end of a socketpair and its PMI variables.
  static Result<std::shared_ptr<Pmi1Server>> prepare(asio::io_context& io, PmiStep step,
                                                     const std::vector<uint32_t>& ranks, std::vector<TaskPlan>& plans,
                                                     std::shared_ptr<StepExchange> exchange, OnAbort on_abort);
  ~Pmi1Server();
  // The tasks were forked (or failed to be): the tasks' ends are closed here, and the
  // conversations start.
  void started();
  void stop();

 private:
  struct Conversation {
    std::unique_ptr<asio::local::stream_protocol::socket> socket;
    int task_end = -1;
    std::deque<std::string> out;
    bool writing = false, closing = false;
  };
  Pmi1Server(asio::io_context& io, PmiStep step, std::shared_ptr<StepExchange> exchange, OnAbort on_abort);
  asio::awaitable<void> read(std::shared_ptr<Pmi1Server> self, size_t task);
  asio::awaitable<void> write(std::shared_ptr<Pmi1Server> self, size_t task);
  void apply(PmiEffects fx);
  void end(size_t task);

  asio::io_context& io_;
  PmiNode node_;
  std::shared_ptr<StepExchange> exchange_;
  OnAbort on_abort_;
  std::vector<Conversation> tasks_;  // never resized once prepared
};

}  // namespace hq::cmd
