// sacct's columns and lines against Slurm 22.05's (tests/fixtures/slurm/sacct, captured on
// the slurm-bench with slurmdbd).
#include <doctest/doctest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "core/sacct_format.hpp"

using namespace hq;

namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(HQ_SOURCE_DIR) + "/tests/fixtures/slurm/sacct/" + name);
  REQUIRE_MESSAGE(in.good(), name);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string first_lines(const std::string& text, int n) {
  std::string out;
  size_t pos = 0;
  for (int i = 0; i < n && pos < text.size(); ++i) {
    size_t nl = text.find('\n', pos);
    out += text.substr(pos, nl - pos + 1);
    pos = nl + 1;
  }
  return out;
}

// The line a map of field values gives.
std::string line(const std::vector<SacctColumn>& cols, const SacctStyle& style,
                 const std::map<std::string_view, std::string>& values) {
  return sacct_line(cols, style, [&](std::string_view name) {
    auto it = values.find(name);
    return it == values.end() ? std::string() : it->second;
  });
}

}  // namespace

TEST_CASE("sacct format: the default columns print Slurm's header, dashes and cut values") {
  auto cols = parse_sacct_format(kSacctDefaultFormat);
  REQUIRE(cols.is_ok());
  std::string golden = fixture("default.txt");
  CHECK(sacct_header(*cols, {}) == first_lines(golden, 2));
  std::map<std::string_view, std::string> cancelled = {{"JobID", "4"},          {"JobName", "longjob"},
                                                       {"Partition", "bench"},   {"Account", "root"},
                                                       {"AllocCPUS", "1"},       {"State", "CANCELLED by 0"},
                                                       {"ExitCode", "0:0"}};
  CHECK(golden.find(line(*cols, {}, cancelled)) != std::string::npos);
  std::map<std::string_view, std::string> longname = {{"JobID", "10"}, {"JobName", "averyveryverylongjobname"},
                                                      {"Partition", "bench"}, {"Account", "root"},
                                                      {"AllocCPUS", "1"}, {"State", "COMPLETED"}, {"ExitCode", "0:0"}};
  CHECK(golden.find(line(*cols, {}, longname)) != std::string::npos);
}

TEST_CASE("sacct format: widths, left justification, prefixes and unknown names") {
  auto cols = parse_sacct_format("JobID,JobName%-30,State%20,ExitCode");
  REQUIRE(cols.is_ok());
  std::string golden = fixture("o-widths-leftjustify.txt");
  CHECK(sacct_header(*cols, {}) == first_lines(golden, 2));
  auto prefixed = parse_sacct_format("jobid,jobn,sta");
  REQUIRE(prefixed.is_ok());
  CHECK(sacct_header(*prefixed, {}) == first_lines(fixture("format-prefix-names.txt"), 2));
  CHECK((*prefixed)[2].name == "Start");  // the first field "sta" begins: Slurm's table order
  auto bad = parse_sacct_format("Bogus");
  REQUIRE_FALSE(bad.is_ok());
  CHECK(std::string("sacct: error: ") + bad.status().message() + "\n" == fixture("format-bogus.err"));
  CHECK(parse_sacct_format("all").value().size() == sacct_fields().size());
  CHECK_FALSE(parse_sacct_format("ReqGRES").is_ok());
}

TEST_CASE("sacct format: -p, -P and --delimiter") {
  auto cols = parse_sacct_format("JobID,JobName,State,ExitCode");
  REQUIRE(cols.is_ok());
  std::map<std::string_view, std::string> v = {{"JobID", "2"}, {"JobName", "okjob"}, {"State", "COMPLETED"}, {"ExitCode", "0:0"}};
  SacctStyle p{SacctPrint::kParsable, "|"};
  std::string golden = fixture("X-p-jobid-jobname-state-exitcode.txt");
  CHECK(sacct_header(*cols, p) == first_lines(golden, 1));
  CHECK(golden.find(line(*cols, p, v)) != std::string::npos);
  SacctStyle p2{SacctPrint::kParsable2, "|"};
  CHECK(line(*cols, p2, v) == "2|okjob|COMPLETED|0:0\n");
  auto two = parse_sacct_format("JobID,State").value();
  SacctStyle comma{SacctPrint::kParsable, ","};
  std::string delim = fixture("X-delimiter-comma-p.txt");
  CHECK(sacct_header(two, comma) == first_lines(delim, 1));
  CHECK(delim.find(line(two, comma, {{"JobID", "4"}, {"State", "CANCELLED by 0"}})) != std::string::npos);
}

TEST_CASE("sacct format: the default window as slurmdb_job_cond_def_start_end sets it") {
  Time now = 1'000'000, midnight = 990'000;
  auto w = sacct_default_window(false, false, now, midnight, 0, 0);
  CHECK((w.start == midnight && w.end == 0));
  w = sacct_default_window(true, false, now, midnight, 0, 0);  // -j alone: no window
  CHECK((w.start == 0 && w.end == 0));
  w = sacct_default_window(false, true, now, midnight, 0, 0);  // -s alone: now..now
  CHECK((w.start == now && w.end == now));
  w = sacct_default_window(false, true, now, midnight, 500, 0);  // -s -S: E defaults to S
  CHECK((w.start == 500 && w.end == 500));
  w = sacct_default_window(true, true, now, midnight, 0, 0);  // -j -s: the states alone
  CHECK((w.start == 0 && w.end == 0));
  w = sacct_default_window(false, false, now, midnight, 100, 200);
  CHECK((w.start == 100 && w.end == 200));
}

TEST_CASE("sacct format: states, exit codes, durations, CPU times and bytes") {
  auto states = parse_sacct_states("ca,F,timeout,oom,R");
  REQUIRE(states.is_ok());
  CHECK(*states == std::vector<std::string>{"CANCELLED", "FAILED", "TIMEOUT", "OUT_OF_MEMORY", "RUNNING"});
  CHECK_FALSE(parse_sacct_states("XX").is_ok());
  CHECK(sacct_exit_code(3, 0) == "3:0");
  CHECK(sacct_exit_code(0, 15) == "0:15");
  CHECK(sacct_exit_code(137, 0) == "9:0");  // Slurm's ExitCode: 128+N reads N (golden sacct-steps, job 5)
  CHECK(sacct_exit_code(137, 0, /*derived=*/true) == "137:0");  // DerivedExitCode is not cut
  CHECK(sacct_duration(82) == "00:01:22");
  CHECK(sacct_duration(90061) == "1-01:01:01");
  CHECK(sacct_duration(-1) == "INVALID");
  CHECK(sacct_cpu_time(0) == "00:00:00");
  CHECK(sacct_cpu_time(1'500'000) == "00:01.500");
  CHECK(sacct_cpu_time(3'723'000'000) == "01:02:03");
  CHECK(sacct_bytes(0) == "0");
  CHECK(sacct_bytes(2154496) == "2104K");
  CHECK(sacct_bytes(1610612736) == "1.50G");
  CHECK(sacct_bytes(1000) == "1000");
}
