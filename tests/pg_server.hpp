// A private PostgreSQL server for the accounting store's tests, so that the same tests run
// on both of its databases: initdb in a temp dir under the build directory, listening on
// 127.0.0.1 only at a free port (no Unix socket), started at first use and stopped (fast)
// when the test process exits. PostgreSQL refuses to run as root: as root it runs as the
// `postgres` user, else `nobody`. `why_not()` says why there is none (no initdb, ...), for
// the test to skip with. instance() is the test process's shared one; a test may start its
// own, among them a streaming standby of another (pg_basebackup -R) that it can promote, for
// failover. Tests are single-threaded.
#pragma once
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <pwd.h>
#include <string>
#include <unistd.h>

#include "loopback.hpp"
#include "temp_dir.hpp"

namespace hq::test {

class PgServer {
 public:
  static PgServer& instance() {
    static PgServer server;
    return server;
  }
  // A server of its own with `options` (postgres -c ...); with `primary`, a streaming standby
  // of it (read-only until promote()).
  explicit PgServer(const std::string& options = "", const PgServer* primary = nullptr) { start(options, primary); }
  PgServer(const PgServer&) = delete;
  PgServer& operator=(const PgServer&) = delete;
  ~PgServer() { stop("fast"); }

  const std::string& why_not() const { return why_not_; }
  int port() const { return port_; }
  // A standby becomes a primary (pg_ctl promote, waited for).
  bool promote() { return run(as_ + bin_ + "/pg_ctl -D " + dir_.path() + "/data -w -t 60 promote > /dev/null 2>&1") == 0; }
  // Stops at once, as a crash would (no shutdown checkpoint).
  void crash() { stop("immediate"); }
  // A libpq URI of database `name`, created when first asked for.
  std::string uri(const std::string& name) {
    std::string base = "postgresql://hq@127.0.0.1:" + std::to_string(port_);
    run(bin_ + "/psql -q -d " + base + "/postgres -c 'CREATE DATABASE \"" + name + "\"' > /dev/null 2>&1");  // fails once it exists
    return base + "/" + name;
  }

 private:
  void start(const std::string& extra, const PgServer* primary) {
    bin_ = find_bin();
    if (bin_.empty()) {
      why_not_ = "no PostgreSQL server programs (/usr/lib/postgresql/*/bin/initdb; Debian's postgresql-15)";
      return;
    }
    as_ = run_as();
    if (as_ == "?") {
      why_not_ = "PostgreSQL cannot run as root, and there is no postgres or nobody user to run it as";
      return;
    }
    std::string data = dir_.path() + "/data";
    if (geteuid() == 0 && run("chown " + owner_ + " " + dir_.path()) != 0) {
      why_not_ = "cannot give " + dir_.path() + " to " + owner_;
      return;
    }
    port_ = free_port();
    if (primary) {  // a copy of the primary's data that follows its WAL
      if (!primary->why_not_.empty()) {
        why_not_ = "its primary did not start: " + primary->why_not_;
        return;
      }
      if (run(as_ + bin_ + "/pg_basebackup -h 127.0.0.1 -p " + std::to_string(primary->port_) + " -U hq -D " + data +
              " -R -X stream > " + dir_.path() + "/basebackup.log 2>&1") != 0) {
        why_not_ = "pg_basebackup failed (" + dir_.path() + "/basebackup.log)";
        return;
      }
    } else if (run(as_ + bin_ + "/initdb -D " + data + " -A trust -U hq --no-sync -E UTF8 > " + dir_.path() +
                   "/initdb.log 2>&1") != 0) {
      why_not_ = "initdb failed (" + dir_.path() + "/initdb.log)";
      return;
    }
    std::string options = "-c listen_addresses=127.0.0.1 -p " + std::to_string(port_) + " -k '' -F " + extra;
    if (run(as_ + bin_ + "/pg_ctl -D " + data + " -l " + dir_.path() + "/server.log -w -t 60 -o \"" + options +
            "\" start > /dev/null") != 0) {
      why_not_ = "the PostgreSQL server did not start (" + dir_.path() + "/server.log)";
      return;
    }
    started_ = true;
  }
  void stop(const char* mode) {
    if (started_) run(as_ + bin_ + "/pg_ctl -D " + dir_.path() + "/data -m " + mode + " -w stop > /dev/null 2>&1");
    started_ = false;
  }

  static int run(const std::string& cmd) { return std::system(cmd.c_str()); }
  static std::string find_bin() {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/usr/lib/postgresql", ec))
      if (std::filesystem::exists(entry.path() / "bin/initdb")) return (entry.path() / "bin").string();
    return "";
  }
  // The command prefix that runs a program as the server's user ("" when not root).
  std::string run_as() {
    if (geteuid() != 0) return "";
    for (const char* name : {"postgres", "nobody"})
      if (const passwd* pw = getpwnam(name)) {
        owner_ = std::to_string(pw->pw_uid) + ":" + std::to_string(pw->pw_gid);
        return "setpriv --reuid=" + std::to_string(pw->pw_uid) + " --regid=" + std::to_string(pw->pw_gid) +
               " --clear-groups ";
      }
    return "?";
  }
  TempDir dir_;
  std::string bin_, as_, owner_, why_not_;
  int port_ = 0;
  bool started_ = false;
};

}  // namespace hq::test
