// cmd/agent/job_spool: an ended job's spool directory is kept for the next job, carrying the
// agent's files as stale `.new` files that the next job's records are written over (the same
// inodes: nothing allocated per job), never anything a reader of the spool would take for a
// record, and the script reused only for the same user.
#include <doctest/doctest.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

#include "../skip.hpp"
#include "../temp_dir.hpp"
#include "cmd/agent/job_spool.hpp"

using namespace hq::cmd;
namespace fs = std::filesystem;

namespace {

ino_t inode_of(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

std::set<std::string> names_in(const std::string& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
  return out;
}

std::string kept_name(const std::string& spool) {
  for (const auto& e : fs::directory_iterator(spool))
    if (e.path().filename().string().rfind(".kept-", 0) == 0) return e.path().string();
  return "";
}

void write_script_text(const std::string& dir, const std::string& text) {
  int fd = open_script_file(dir, geteuid());
  REQUIRE(fd >= 0);
  REQUIRE(write_whole_file(fd, text.data(), text.size()));
  ::close(fd);
}

std::string text_of(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// A run's files as the agent and the shim leave them.
void run_job(const std::string& spool, uint64_t id) {
  REQUIRE(make_job_dir(spool, id));
  std::string dir = job_dir(spool, id);
  write_script_text(dir, "#!/bin/sh\ntrue\n");
  REQUIRE(replace_spool_file(pids_file(spool, id), "shim=1 script=2\nlaunch", 0600));
  REQUIRE(replace_spool_file(exit_file(spool, id), "0", 0644));
  std::ofstream(fenced_file(spool, id)) << "";
  fs::create_directories(dir + "/step_ids");
  REQUIRE(replace_spool_file(ended_file(spool, id), "end", 0600));
}

// Jobs first..last run, then (end_jobs) end, their directories kept where they can be.
void run_jobs(const std::string& spool, uint64_t first, uint64_t last) {
  for (uint64_t id = first; id <= last; ++id) run_job(spool, id);
}
void end_jobs(const std::string& spool, uint64_t first, uint64_t last) {
  for (uint64_t id = first; id <= last; ++id) cleanup_spool(spool, id);
}

size_t kept_on_disk(const std::string& spool) {
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(spool)) n += e.path().filename().string().rfind(".kept-", 0) == 0;
  return n;
}

}  // namespace

TEST_CASE("an ended job's spool directory is kept with stale .new files only, and the next job takes it") {
  hq::test::TempDir tmp;
  std::string spool = tmp.path();
  drop_kept_dirs(spool);
  run_job(spool, 1);
  ino_t dir_inode = inode_of(job_dir(spool, 1)), pids_inode = inode_of(pids_file(spool, 1));
  ino_t script_inode = inode_of(job_dir(spool, 1) + "/script");

  clear_run(spool, 1);  // the end is kept until the controller acks it
  CHECK(names_in(job_dir(spool, 1)) == std::set<std::string>{"ended", "exit.new", "pids.new", "script.new"});

  cleanup_spool(spool, 1);
  CHECK_FALSE(fs::exists(job_dir(spool, 1)));
  REQUIRE(kept_dir_count(spool) == 1);
  std::string kept = kept_name(spool);
  REQUIRE_FALSE(kept.empty());
  CHECK(names_in(kept) == std::set<std::string>{"ended.new", "exit.new", "pids.new", "script.new"});

  REQUIRE(make_job_dir(spool, 2));
  CHECK(kept_dir_count(spool) == 0);
  CHECK(inode_of(job_dir(spool, 2)) == dir_inode);
  CHECK_FALSE(fs::exists(pids_file(spool, 2)));  // no record until this run writes one
  CHECK_FALSE(fs::exists(exit_file(spool, 2)));
  write_script_text(job_dir(spool, 2), "echo two\n");
  REQUIRE(replace_spool_file(pids_file(spool, 2), "shim=3 script=4\nx", 0600));
  CHECK(inode_of(pids_file(spool, 2)) == pids_inode);
  CHECK(inode_of(job_dir(spool, 2) + "/script") == script_inode);
  CHECK(text_of(job_dir(spool, 2) + "/script") == "echo two\n");  // the old script's longer text is gone
  CHECK(text_of(pids_file(spool, 2)) == "shim=3 script=4\nx");    // and the old record's
  struct stat st {};
  REQUIRE(::stat(pids_file(spool, 2).c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
}

namespace {
// A kept script of ours in `dir`, with a descriptor held on it: after open_script_file its
// link count says whether the file was reused (renamed to `script`) or replaced (unlinked).
int kept_script_held(const std::string& dir) {
  write_script_text(dir, "old\n");
  REQUIRE(::rename((dir + "/script").c_str(), (dir + "/script.new").c_str()) == 0);
  int held = ::open((dir + "/script.new").c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(held >= 0);
  return held;
}
nlink_t links_of(int fd) {
  struct stat st {};
  REQUIRE(::fstat(fd, &st) == 0);
  return st.st_nlink;
}
}  // namespace

TEST_CASE("a kept script is reused for its own user only") {
  hq::test::TempDir tmp;
  std::string dir = tmp.path();
  int held = kept_script_held(dir);
  int fd = open_script_file(dir, geteuid() + 1);  // another user's job
  REQUIRE(fd >= 0);
  ::close(fd);
  CHECK(links_of(held) == 0);  // the old file is gone, not handed on
  CHECK_FALSE(fs::exists(dir + "/script.new"));
  CHECK(fs::file_size(dir + "/script") == 0);
  ::close(held);

  held = kept_script_held(dir);
  fd = open_script_file(dir, geteuid());  // the same user's
  REQUIRE(fd >= 0);
  REQUIRE(write_whole_file(fd, "x", 1));
  ::close(fd);
  CHECK(links_of(held) == 1);  // reused: it is the new script
  CHECK(text_of(dir + "/script") == "x");
  ::close(held);
}

TEST_CASE("write_whole_file leaves exactly the new text, over a longer, a shorter or no old one") {
  hq::test::TempDir tmp;
  std::string path = tmp.path() + "/f";
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  REQUIRE(fd >= 0);
  for (std::string text : {"137\n", "0\n", "", "a longer text than before\n", "1\n"}) {
    CAPTURE(text);
    REQUIRE(write_whole_file(fd, text.data(), text.size()));
    CHECK(text_of(path) == text);
  }
  ::close(fd);
  int read_only = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(read_only >= 0);
  CHECK_FALSE(write_whole_file(read_only, "x", 1));  // a failed write is reported
  ::close(read_only);
}

TEST_CASE("a kept script its user holds a lease on is replaced at once, not waited for") {
  hq::test::TempDir tmp;
  std::string dir = tmp.path();
  int held = kept_script_held(dir);
  auto old_handler = std::signal(SIGIO, SIG_IGN);  // the lease's break notice comes to us
  if (::fcntl(held, F_SETLEASE, F_RDLCK) != 0) {
    std::signal(SIGIO, old_handler);
    ::close(held);
    HQ_SKIP(std::string("no file leases here: ") + std::strerror(errno));
  }
  auto start = std::chrono::steady_clock::now();
  int fd = open_script_file(dir, geteuid());
  auto took = std::chrono::steady_clock::now() - start;
  REQUIRE(fd >= 0);
  ::close(fd);
  CHECK(took < std::chrono::seconds(5));  // a blocking open waits lease-break-time (45 s)
  CHECK(links_of(held) == 0);             // replaced by a new file
  CHECK(fs::file_size(dir + "/script") == 0);
  (void)::fcntl(held, F_SETLEASE, F_UNLCK);
  ::close(held);
  std::signal(SIGIO, old_handler);
}

TEST_CASE("kept directories are bounded, also when an agent's start takes them up") {
  hq::test::TempDir tmp;
  std::string spool = tmp.path();
  drop_kept_dirs(spool);
  run_jobs(spool, 1, 70);
  end_jobs(spool, 1, 70);
  CHECK(kept_dir_count(spool) == 64);
  CHECK(kept_on_disk(spool) == 64);
  CHECK(names_in(spool).size() == 64);  // nothing else
  drop_kept_dirs(spool);
  CHECK(kept_dir_count(spool) == 0);
  CHECK(fs::is_empty(spool));
  REQUIRE(make_job_dir(spool, 99));  // a fresh directory when none is kept
  CHECK(fs::is_directory(job_dir(spool, 99)));
}

TEST_CASE("a requeued job's directory (its end kept) is used as it is") {
  hq::test::TempDir tmp;
  std::string spool = tmp.path();
  drop_kept_dirs(spool);
  run_job(spool, 7);
  clear_run(spool, 7);
  run_job(spool, 5);
  cleanup_spool(spool, 5);
  REQUIRE(make_job_dir(spool, 7));
  CHECK(kept_dir_count(spool) == 1);  // the kept one stays for another job
  CHECK(fs::exists(ended_file(spool, 7)));
}

TEST_CASE("an agent's start makes kept directories up to what it asks, within the bound, and jobs take them") {
  hq::test::TempDir tmp;
  std::string spool = tmp.path();
  prepare_kept_dirs(spool, 3);
  REQUIRE(kept_dir_count(spool) == 3);
  std::set<ino_t> made;
  for (const auto& e : fs::directory_iterator(spool)) {
    CHECK(e.path().filename().string().rfind(".kept-", 0) == 0);
    CHECK(names_in(e.path().string()) == std::set<std::string>{"ended.new", "exit.new", "pids.new"});
    made.insert(inode_of(e.path().string()));
    made.insert(inode_of(e.path().string() + "/pids.new"));
  }
  REQUIRE(made.size() == 6);
  REQUIRE(make_job_dir(spool, 1));
  CHECK(kept_dir_count(spool) == 2);
  CHECK(made.count(inode_of(job_dir(spool, 1))) == 1);  // no directory made for the job
  REQUIRE(replace_spool_file(pids_file(spool, 1), "shim=1 script=2\nx", 0600));
  CHECK(made.count(inode_of(pids_file(spool, 1))) == 1);  // nor a file for its record
  CHECK(text_of(pids_file(spool, 1)) == "shim=1 script=2\nx");

  prepare_kept_dirs(spool, 1000);  // a restart on a node of many CPUs: within the bound
  CHECK(kept_dir_count(spool) == 64);
}

TEST_CASE("an agent's start takes up the directories an earlier agent kept, stripped, and drops what is not one") {
  hq::test::TempDir tmp;
  std::string spool = tmp.path();
  drop_kept_dirs(spool);
  run_jobs(spool, 1, 3);
  end_jobs(spool, 1, 3);
  REQUIRE(kept_dir_count(spool) == 3);
  std::string kept = kept_name(spool);
  ino_t kept_inode = inode_of(kept);
  std::ofstream(kept + "/junk") << "x";  // what a kept directory never holds
  std::ofstream(kept + "/exit") << "0";  // nor a record under its own name
  fs::create_directories(spool + "/.kept-x/sub");
  std::ofstream(spool + "/.kept-99") << "not a directory";

  prepare_kept_dirs(spool, 0);  // the next agent
  CHECK(kept_dir_count(spool) == 3);
  CHECK_FALSE(fs::exists(spool + "/.kept-x"));
  CHECK_FALSE(fs::exists(spool + "/.kept-99"));
  CHECK(inode_of(kept) == kept_inode);
  CHECK(names_in(kept) == std::set<std::string>{"ended.new", "exit.new", "pids.new", "script.new"});

  run_jobs(spool, 4, 7);  // the three taken, and one made
  CHECK(kept_dir_count(spool) == 0);
  end_jobs(spool, 4, 7);
  CHECK(kept_dir_count(spool) == 4);
  CHECK(kept_on_disk(spool) == 4);
}
