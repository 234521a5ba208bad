// StepExchange: an all-gather among the nodes of one job step, for the process-management
// servers that serve a step's tasks on each node (the PMI-1 server, a PMIx server).
// Each node of the step contributes one opaque blob per round; when every node's blob of
// the round is in, every node gets all of them in node order (a node's index in the step,
// its SLURM_NODEID). Rounds run strictly in order: a node starts round r+1 only after it
// got round r. The step's manager (the job's first node) gathers (StepGatherer, over core
// ExchangeGather) and sends the result to every node over the peer links (StepExchangeIn,
// StepExchangeOut in hq.proto), in parts that each fit a frame (a node's blob is at most
// kExchangeBlobMax: a bigger one fails the round on every node, with the reason); the
// step manager routes those messages. A lost link
// fails the round under way, and every later one, on every node (the step is being
// killed then anyway).
//
// Use, on each node of the step (the step manager hands out the StepExchange):
//   exchange->all_gather(blob, [](Result<std::vector<std::string>> blobs) { ... });
// `done` is called exactly once, never from inside all_gather.
// Runs on the agent's event-loop thread.
#pragma once
#include <asio/io_context.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/status.hpp"
#include "core/step_exchange.hpp"
#include "hq.pb.h"

namespace hq::cmd {

// One node's member of a step's all-gather.
class StepExchange {
 public:
  using Done = std::function<void(Result<std::vector<std::string>>)>;
  using Send = std::function<void(const pb::Envelope&)>;  // a StepExchangeIn, to the manager

  StepExchange(asio::io_context& io, uint64_t job_id, uint32_t step_id, uint32_t node_index, Send send);
  // This node's blob for the next round. `done` gets every node's blob in node order, or
  // why the round failed (also when a round is already under way here).
  void all_gather(std::string blob, Done done);
  // The manager's answer (from the peer link, or from the manager on its own node).
  void deliver(const pb::StepExchangeOut& out);
  // The way to the manager is gone: the round under way, and every later one, fail.
  void fail(const Status& why);
  uint32_t node_index() const { return node_index_; }

 private:
  void finish(Result<std::vector<std::string>> result);

  asio::io_context& io_;
  uint64_t job_id_;
  uint32_t step_id_;
  uint32_t node_index_;
  Send send_;
  ExchangeMember member_;
  Done done_;
  Status failure_;
};

// At the step's manager: gathers each round's blobs and sends the result (or the failure)
// to every node of the step through `broadcast`.
class StepGatherer {
 public:
  using Broadcast = std::function<void(const pb::Envelope&)>;  // a StepExchangeOut, to every node

  StepGatherer(uint64_t job_id, uint32_t step_id, size_t nodes, Broadcast broadcast);
  // A node's contribution; the caller has checked that it comes from node `in.node_index()`.
  // An error (logged by the caller) for one that breaks the rules: nothing is sent. A node
  // that cannot take part (too big a blob) fails the step's rounds everywhere; the error
  // says why.
  Status add(const pb::StepExchangeIn& in);
  // A node of the step was lost: the round under way fails everywhere, as will later ones.
  void fail(const Status& why);

 private:
  void send_failure(uint32_t round);
  void send_parts(uint32_t round, std::vector<std::string> blobs);
  pb::Envelope answer(uint32_t round) const;

  uint64_t job_id_;
  uint32_t step_id_;
  ExchangeGather gather_;
  Broadcast broadcast_;
};

}  // namespace hq::cmd
