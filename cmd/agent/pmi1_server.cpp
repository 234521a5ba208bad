#include "cmd/agent/pmi1_server.hpp"

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/redirect_error.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/write.hpp>
#include <array>
#include <cerrno>
#include <cstring>
#include <sys/socket.h>
#include <unistd.h>

#include "cmd/agent/step_exchange.hpp"
#include "net/log.hpp"

namespace hq::cmd {
namespace {

// The task's PMI variables over whatever srun's environment had of them.
void set_pmi_env(std::vector<std::string>& env, uint32_t rank, const PmiStep& step) {
  std::erase_if(env, [](const std::string& kv) {
    for (const char* key : {"PMI_FD=", "PMI_RANK=", "PMI_SIZE=", "PMI_JOBID="})
      if (kv.rfind(key, 0) == 0) return true;
    return false;
  });
  env.push_back("PMI_FD=3");
  env.push_back("PMI_RANK=" + std::to_string(rank));
  env.push_back("PMI_SIZE=" + std::to_string(step.size));
  env.push_back("PMI_JOBID=" + step.kvsname);
}

}  // namespace

Pmi1Server::Pmi1Server(asio::io_context& io, PmiStep step, std::shared_ptr<StepExchange> exchange, OnAbort on_abort)
    : io_(io), node_(step), exchange_(std::move(exchange)), on_abort_(std::move(on_abort)), tasks_(step.local_tasks) {}

Pmi1Server::~Pmi1Server() {
  for (auto& t : tasks_)
    if (t.task_end >= 0) close(t.task_end);
}

Result<std::shared_ptr<Pmi1Server>> Pmi1Server::prepare(asio::io_context& io, PmiStep step,
                                                        const std::vector<uint32_t>& ranks,
                                                        std::vector<TaskPlan>& plans,
                                                        std::shared_ptr<StepExchange> exchange, OnAbort on_abort) {
  step.local_tasks = plans.size();
  std::shared_ptr<Pmi1Server> self(new Pmi1Server(io, step, std::move(exchange), std::move(on_abort)));
  for (size_t i = 0; i < plans.size(); ++i) {
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
      return io_error(std::string("PMI socketpair: ") + std::strerror(errno));
    Conversation& c = self->tasks_[i];
    c.socket = std::make_unique<asio::local::stream_protocol::socket>(io);
    asio::error_code ec;
    c.socket->assign(asio::local::stream_protocol(), pair[0], ec);
    c.task_end = pair[1];
    if (ec) {
      close(pair[0]);
      return io_error("PMI socket: " + ec.message());
    }
    plans[i].pmi_fd = pair[1];
    set_pmi_env(plans[i].env, ranks.at(i), step);
  }
  return self;
}

void Pmi1Server::started() {
  for (size_t i = 0; i < tasks_.size(); ++i) {
    if (tasks_[i].task_end >= 0) close(tasks_[i].task_end);
    tasks_[i].task_end = -1;
    asio::co_spawn(io_, read(shared_from_this(), i), asio::detached);
  }
}

void Pmi1Server::stop() {
  for (auto& t : tasks_) {
    asio::error_code ignored;
    if (t.socket) t.socket->close(ignored);
  }
}

// A task's lines, each answered in turn; its end (or a line too long) ends the conversation.
asio::awaitable<void> Pmi1Server::read(std::shared_ptr<Pmi1Server> self, size_t task) {
  auto& socket = *tasks_[task].socket;
  std::string buffer;
  std::array<char, 4096> chunk;
  while (socket.is_open()) {
    asio::error_code ec;
    size_t n = co_await socket.async_read_some(asio::buffer(chunk), asio::redirect_error(asio::use_awaitable, ec));
    if (ec || n == 0) break;
    buffer.append(chunk.data(), n);
    size_t start = 0, nl = 0;
    bool too_long = false;
    for (; socket.is_open() && (nl = buffer.find('\n', start)) != std::string::npos; start = nl + 1) {
      if ((too_long = nl - start > kPmiMaxLine)) break;
      apply(node_.line(task, std::string_view(buffer).substr(start, nl - start)));
    }
    buffer.erase(0, start);
    if (too_long || buffer.size() > kPmiMaxLine) {
      log::warn("PMI: task " + std::to_string(task) + " sent a line longer than " + std::to_string(kPmiMaxLine) +
                " bytes; its PMI connection is closed");
      break;
    }
  }
  end(task);
}

void Pmi1Server::apply(PmiEffects fx) {
  for (auto& [task, line] : fx.replies) {
    Conversation& c = tasks_[task];
    if (!c.socket->is_open()) continue;
    c.out.push_back(std::move(line));
    if (c.writing) continue;
    c.writing = true;  // before the writer runs: one writer per task
    asio::co_spawn(io_, write(shared_from_this(), task), asio::detached);
  }
  for (size_t task : fx.close) {
    tasks_[task].closing = true;
    if (!tasks_[task].writing) end(task);
  }
  if (fx.exchange) {
    std::weak_ptr<Pmi1Server> weak = shared_from_this();
    exchange_->all_gather(std::move(*fx.exchange), [weak](Result<std::vector<std::string>> blobs) {
      if (auto self = weak.lock()) self->apply(self->node_.exchanged(blobs));
    });
  }
  if (fx.abort && on_abort_) on_abort_(*fx.abort);
}

asio::awaitable<void> Pmi1Server::write(std::shared_ptr<Pmi1Server> self, size_t task) {
  Conversation& c = tasks_[task];
  while (!c.out.empty() && c.socket->is_open()) {
    std::string line = std::move(c.out.front());
    c.out.pop_front();
    asio::error_code ec;
    co_await asio::async_write(*c.socket, asio::buffer(line), asio::redirect_error(asio::use_awaitable, ec));
    if (ec) break;
  }
  c.writing = false;
  if (c.closing) end(task);
}

// The conversation is over: the socket closes and the task no longer counts for barriers.
void Pmi1Server::end(size_t task) {
  Conversation& c = tasks_[task];
  c.out.clear();
  asio::error_code ignored;
  c.socket->close(ignored);
  apply(node_.gone(task));
}

}  // namespace hq::cmd
