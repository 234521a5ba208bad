// doctest's main for every hq test binary, the reporting half of HQ_SKIP (skip.hpp), and
// test_case_failed() for fixtures that show what they kept when a case fails.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdlib>
#include <ostream>

#include "core/std_streams.hpp"
#include "skip.hpp"
#include "temp_dir.hpp"

namespace hq::test {
namespace {

std::string g_skip_reason;  // set by HQ_SKIP in the running test case
bool g_failed = false;      // an assertion of the running test case failed

// Prints the marker CTest looks for when a skipped case ends, and counts the skips for
// runs outside CTest (doctest itself counts them as passed).
class SkipReporter : public doctest::IReporter {
 public:
  explicit SkipReporter(const doctest::ContextOptions& opts) : out_(*opts.cout) {}
  void test_case_start(const doctest::TestCaseData&) override {
    g_skip_reason.clear();
    g_failed = false;
  }
  void test_case_end(const doctest::CurrentTestCaseStats& stats) override {
    if (g_skip_reason.empty()) return;
    if (stats.testCaseSuccess) {
      out_ << "HQ_SKIPPED: " << g_skip_reason << "\n";
      ++skipped_;
    } else {
      out_ << "asked to skip (" << g_skip_reason << ") after a failure: reported as failed\n";
    }
    g_skip_reason.clear();
  }
  void test_run_end(const doctest::TestRunStats&) override {
    if (skipped_ > 0) out_ << skipped_ << " test case(s) could not run here (HQ_SKIPPED above; doctest counts them as passed)\n";
  }
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_exception(const doctest::TestCaseException&) override { g_failed = true; }
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData& a) override { g_failed = g_failed || a.m_failed; }
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}

 private:
  std::ostream& out_;
  int skipped_ = 0;
};

}  // namespace

void skip_test_case(std::string reason) { g_skip_reason = std::move(reason); }
bool test_case_failed() { return g_failed; }

}  // namespace hq::test

REGISTER_LISTENER("hq_skip", 1, hq::test::SkipReporter);

int main(int argc, char** argv) {
  // doctest writes to std::cout: the static test binaries build the standard streams at
  // first use (core/std_streams.hpp), so here, before anything else.
  hq::cout();
  // Whatever a test runs keeps its per-user files (the client's TLS session cache, an
  // agent's default spool) under the build directory, not in the tester's home.
  setenv("HQ_HOME", (hq::test::test_tmp_root() + "/home").c_str(), 1);
  // Every controller a test starts keeps each squeue listing it makes and, each time it
  // sends a kept one, checks it against one made afresh (aborting on a stale one): a change
  // of what listings show that forgot core touch_listed fails whatever test lists the jobs.
  setenv("HQ_CHECK_LISTINGS", "1", 1);
  doctest::Context context(argc, argv);
  return context.run();
}
