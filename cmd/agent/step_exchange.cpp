#include "cmd/agent/step_exchange.hpp"

#include <asio/post.hpp>
#include <utility>

namespace hq::cmd {

StepExchange::StepExchange(asio::io_context& io, uint64_t job_id, uint32_t step_id, uint32_t node_index, Send send)
    : io_(io), job_id_(job_id), step_id_(step_id), node_index_(node_index), send_(std::move(send)) {}

void StepExchange::all_gather(std::string blob, Done done) {
  auto round = failure_ ? member_.begin() : Result<uint32_t>(failure_);
  if (!round) {
    asio::post(io_, [done = std::move(done), s = round.status()] { done(s); });
    return;
  }
  done_ = std::move(done);
  pb::Envelope env;
  auto* in = env.mutable_step_exchange_in();
  in->set_job_id(job_id_);
  in->set_step_id(step_id_);
  in->set_round(*round);
  in->set_node_index(static_cast<int32_t>(node_index_));
  in->set_blob(std::move(blob));
  send_(env);
}

void StepExchange::deliver(const pb::StepExchangeOut& out) {
  if (!member_.end(out.round())) return;  // not the round under way: stale or bogus
  if (!out.error().empty()) return finish(unavailable(out.error()));
  finish(std::vector<std::string>(out.blobs().begin(), out.blobs().end()));
}

void StepExchange::fail(const Status& why) {
  if (!failure_) return;
  failure_ = why;
  if (member_.busy()) finish(why);
}

// `done` runs from the loop: a caller may start the next round from it, and a round that
// completes at once (a one-node step) does not call back into its caller.
void StepExchange::finish(Result<std::vector<std::string>> result) {
  Done done = std::move(done_);
  done_ = nullptr;
  if (done) asio::post(io_, [done = std::move(done), r = std::move(result)]() mutable { done(std::move(r)); });
}

StepGatherer::StepGatherer(uint64_t job_id, uint32_t step_id, size_t nodes, Broadcast broadcast)
    : job_id_(job_id), step_id_(step_id), gather_(nodes), broadcast_(std::move(broadcast)) {}

Status StepGatherer::add(const pb::StepExchangeIn& in) {
  if (in.node_index() < 0) return invalid("exchange: a negative node index");
  if (!gather_.failure()) {  // a node that had not heard yet: its round fails too
    send_failure(in.round());
    return Status::ok();
  }
  auto all = gather_.add(static_cast<size_t>(in.node_index()), in.round(), in.blob());
  if (!all) return all.status();
  if (!all->has_value()) return Status::ok();
  pb::Envelope env;
  auto* out = env.mutable_step_exchange_out();
  out->set_job_id(job_id_);
  out->set_step_id(step_id_);
  out->set_round(in.round());
  for (auto& blob : **all) out->add_blobs(std::move(blob));
  broadcast_(env);
  return Status::ok();
}

void StepGatherer::fail(const Status& why) {
  if (!gather_.failure()) return;
  gather_.fail(why);
  send_failure(gather_.round());
}

void StepGatherer::send_failure(uint32_t round) {
  pb::Envelope env;
  auto* out = env.mutable_step_exchange_out();
  out->set_job_id(job_id_);
  out->set_step_id(step_id_);
  out->set_round(round);
  out->set_error(gather_.failure().message());
  broadcast_(env);
}

}  // namespace hq::cmd
