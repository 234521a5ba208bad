// Work the controller's loop hands to one worker thread: writing a long reply (a REST
// listing's JSON, a /metrics page) from data the loop copied out, so the loop goes on with
// agents, clients and scheduling meanwhile. Each piece of work owns what it reads (never the
// domain state); its result comes back to the loop by asio::post, in the order given. The
// destructor finishes the piece at hand and drops the rest. Construct, run and destroy on
// the loop's thread.
#pragma once
#include <asio/io_context.hpp>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace hq::cmd {

class OffLoop {
 public:
  explicit OffLoop(asio::io_context& io);
  ~OffLoop();
  OffLoop(const OffLoop&) = delete;
  OffLoop& operator=(const OffLoop&) = delete;

  // `work` on the worker thread; then `done` with its text on the loop.
  void run(std::function<std::string()> work, std::function<void(std::string)> done);

 private:
  void loop();
  asio::io_context& io_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::thread thread_;  // started on first use
};

}  // namespace hq::cmd
