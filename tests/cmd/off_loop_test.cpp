// OffLoop (cmd/controller/off_loop): work runs on another thread, its results come back on
// the loop's thread in the order given, and destroying it with work queued neither hangs nor
// calls back.
#include <doctest/doctest.h>

#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <thread>
#include <vector>

#include "cmd/controller/off_loop.hpp"

using namespace hq::cmd;

TEST_CASE("off loop: work on a worker thread, results on the loop in order") {
  asio::io_context io;
  std::vector<std::string> got;
  std::thread::id loop_thread = std::this_thread::get_id(), work_thread;
  auto busy = asio::make_work_guard(io);  // run_one waits for the posts to come
  {
    OffLoop off(io);
    for (int i = 0; i < 5; ++i)
      off.run([i, &work_thread] { work_thread = std::this_thread::get_id(); return "page " + std::to_string(i); },
              [&got, loop_thread](std::string text) {
                CHECK(std::this_thread::get_id() == loop_thread);
                got.push_back(std::move(text));
              });
    while (got.size() < 5) io.run_one();  // each result is posted to the loop
  }
  CHECK(got == std::vector<std::string>{"page 0", "page 1", "page 2", "page 3", "page 4"});
  CHECK(work_thread != loop_thread);
}

TEST_CASE("off loop: destroyed with work queued - the worker stops, nothing calls back") {
  asio::io_context io;
  int called = 0;
  {
    OffLoop off(io);
    for (int i = 0; i < 100; ++i) off.run([] { return std::string(1000, 'x'); }, [&called](std::string) { ++called; });
  }
  size_t ran = io.poll();  // what the worker finished before the end was posted; it runs now
  CHECK(ran == static_cast<size_t>(called));
  io.restart();
  CHECK(io.poll() == 0);  // the worker is gone: nothing more comes
}
