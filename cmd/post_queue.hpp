// PostQueue: a stand-in for a daemon's event loop where there is none (benchmarks, tests):
// functions posted from any thread run on the thread that calls run_until.
// Threads: post() from any thread; run_until() from one.
#pragma once
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>

#include "net/clock.hpp"

namespace hq::cmd {

class PostQueue {
 public:
  void post(std::function<void()> fn) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      tasks_.push_back(std::move(fn));
    }
    cv_.notify_one();
  }
  // Runs posted tasks until `done()` or `timeout_s`; false on the timeout.
  bool run_until(const std::function<bool()>& done, double timeout_s) {
    double end = net::mono_seconds() + timeout_s;
    while (!done()) {
      std::unique_lock<std::mutex> lock(mu_);
      if (!cv_.wait_until(lock, std::chrono::steady_clock::now() + std::chrono::milliseconds(100),
                          [&] { return !tasks_.empty(); })) {
        if (net::mono_seconds() > end) return false;
        continue;
      }
      auto fn = std::move(tasks_.front());
      tasks_.pop_front();
      lock.unlock();
      fn();
    }
    return true;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
};

}  // namespace hq::cmd
