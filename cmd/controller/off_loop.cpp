#include "cmd/controller/off_loop.hpp"

#include <asio/post.hpp>

namespace hq::cmd {

OffLoop::OffLoop(asio::io_context& io) : io_(io) {}

OffLoop::~OffLoop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    queue_.clear();
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void OffLoop::run(std::function<std::string()> work, std::function<void(std::string)> done) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back([this, work = std::move(work), done = std::move(done)]() mutable {
      std::string text = work();
      asio::post(io_, [done = std::move(done), text = std::move(text)]() mutable { done(std::move(text)); });
    });
  }
  if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
  wake_.notify_one();
}

void OffLoop::loop() {
  for (;;) {
    std::function<void()> next;
    {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      next = std::move(queue_.front());
      queue_.pop_front();
    }
    next();
  }
}

}  // namespace hq::cmd
