// The PMI-1 server's I/O (cmd/agent/pmi1_server) over a real socketpair, the test playing
// the task: the task's variables, lines split across reads, a barrier through a one-node
// all-gather, abort to the step, and a line too long closing the conversation.
#include <doctest/doctest.h>

#include <algorithm>
#include <asio/io_context.hpp>
#include <chrono>
#include <fcntl.h>
#include <memory>
#include <unistd.h>

#include "cmd/agent/pmi1_server.hpp"
#include "cmd/agent/step_exchange.hpp"

using namespace hq;
using namespace hq::cmd;

namespace {

struct Task {
  asio::io_context& io;
  int fd;
  void say(const std::string& s) { REQUIRE(write(fd, s.data(), s.size()) == static_cast<ssize_t>(s.size())); }
  // The server's next line, or "EOF" once it closed; runs the loop meanwhile (bounded).
  std::string answer() {
    std::string line;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      io.run_for(std::chrono::milliseconds(5));
      char c;
      ssize_t n;
      while ((n = read(fd, &c, 1)) == 1) {
        line += c;
        if (c == '\n') return line;
      }
      if (n == 0) return "EOF";
    }
    return "timeout: " + line;
  }
};

}  // namespace

TEST_CASE("pmi1 server: task variables - split lines - barrier through the exchange - abort - a long line closes") {
  asio::io_context io;
  std::shared_ptr<StepExchange> exchange;
  StepGatherer gather(12, 3, 1, [&](const pb::Envelope& out) { exchange->deliver(out.step_exchange_out()); });
  exchange = std::make_shared<StepExchange>(io, 12, 3, 0, [&](const pb::Envelope& in) {
    REQUIRE(gather.add(in.step_exchange_in()));
  });
  std::vector<TaskPlan> plans(1);
  plans[0].env = {"PATH=/bin", "PMI_RANK=99"};
  int aborted = -1;
  auto server = Pmi1Server::prepare(io, PmiStep{"12.3", 4, 0, {}}, {2}, plans, exchange, [&](int c) { aborted = c; });
  REQUIRE(server);
  CHECK(plans[0].env == std::vector<std::string>{"PATH=/bin", "PMI_FD=3", "PMI_RANK=2", "PMI_SIZE=4", "PMI_JOBID=12.3"});
  REQUIRE(plans[0].pmi_fd >= 0);
  int fd = dup(plans[0].pmi_fd);  // the test keeps the task's end; the server closes its copy
  (*server)->started();
  fcntl(fd, F_SETFL, O_NONBLOCK);
  Task task{io, fd};
  task.say("cmd=put kvsname=12.3 key=a value=1 2\ncmd=barr");
  CHECK(task.answer() == "cmd=put_result rc=0\n");
  task.say("ier_in\n");
  CHECK(task.answer() == "cmd=barrier_out rc=0\n");
  task.say("cmd=get kvsname=12.3 key=a\n");
  CHECK(task.answer() == "cmd=get_result rc=0 value=1 2\n");
  task.say("cmd=abort exitcode=9\n");
  for (int i = 0; i < 2000 && aborted < 0; ++i) io.run_for(std::chrono::milliseconds(5));
  CHECK(aborted == 9);
  task.say(std::string(kPmiMaxLine + 100, 'x'));
  CHECK(task.answer() == "EOF");
  close(fd);
}
