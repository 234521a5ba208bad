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
  if (blob.size() > kExchangeBlobMax)  // the round fails on every node, with the reason
    in->set_error("node " + std::to_string(node_index_) + " of the step has " + std::to_string(blob.size()) +
                  " bytes of process-management data for one exchange, over the limit of " +
                  std::to_string(kExchangeBlobMax) + " bytes");
  else
    in->set_blob(std::move(blob));
  send_(env);
}

void StepExchange::deliver(const pb::StepExchangeOut& out) {
  if (!out.error().empty()) {
    if (member_.end(out.round())) finish(unavailable(out.error()));
    return;  // otherwise not the round under way: stale or bogus
  }
  if (!member_.busy()) return;  // no round under way: stale or bogus
  std::vector<std::string> part(out.blobs().begin(), out.blobs().end());
  // total 0: a manager from before parts, whose one message holds the whole answer.
  size_t total = out.total() > 0 ? out.total() : part.size();
  auto all = member_.take(out.round(), out.first(), total, std::move(part));
  if (!all) {  // a part of the round under way that breaks the rules: it fails rather than wait
    if (member_.end(out.round())) finish(all.status());
    return;  // else a stale round's
  }
  if (all->has_value()) finish(std::move(**all));
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
  if (!in.error().empty() || in.blob().size() > kExchangeBlobMax) {
    Status why = invalid(in.error().empty() ? "node " + std::to_string(in.node_index()) + "'s exchange blob is over the limit"
                                            : in.error());
    fail(why);
    return why;  // the caller logs the reason; every node's round has failed with it
  }
  auto all = gather_.add(static_cast<size_t>(in.node_index()), in.round(), in.blob());
  if (!all) return all.status();
  if (!all->has_value()) return Status::ok();
  send_parts(in.round(), std::move(**all));
  return Status::ok();
}

// The round's answer in parts that each fit a frame; every node puts them back together.
void StepGatherer::send_parts(uint32_t round, std::vector<std::string> blobs) {
  for (const ExchangePart& part : exchange_parts(blobs)) {
    pb::Envelope env = answer(round);
    auto* out = env.mutable_step_exchange_out();
    out->set_first(static_cast<uint32_t>(part.first));
    out->set_total(static_cast<uint32_t>(blobs.size()));
    for (size_t i = part.first; i < part.end; ++i) out->add_blobs(std::move(blobs[i]));
    broadcast_(env);
  }
}

void StepGatherer::fail(const Status& why) {
  if (!gather_.failure()) return;
  gather_.fail(why);
  send_failure(gather_.round());
}

void StepGatherer::send_failure(uint32_t round) {
  pb::Envelope env = answer(round);
  env.mutable_step_exchange_out()->set_error(gather_.failure().message());
  broadcast_(env);
}

// A StepExchangeOut of this step's round `round`, to fill in.
pb::Envelope StepGatherer::answer(uint32_t round) const {
  pb::Envelope env;
  auto* out = env.mutable_step_exchange_out();
  out->set_job_id(job_id_);
  out->set_step_id(step_id_);
  out->set_round(round);
  return env;
}

}  // namespace hq::cmd
