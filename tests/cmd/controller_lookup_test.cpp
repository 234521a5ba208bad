// Where clients find the controller: one rule, the first that applies - HQ_CONTROLLER
// (which --controller sets), HQ_CONFIG, the running `hq local` cluster, /etc/hq/config.toml.
// A named config that is there wins over a local cluster (it used to be the other way round);
// one that is not there means "no config file" (tests and scripts set HQ_CONFIG=/nonexistent).
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "../temp_dir.hpp"
#include "cmd/paths.hpp"

using namespace hq;

namespace {
// Sets or clears an environment variable for one scope.
struct EnvVar {
  std::string name;
  std::string old;
  bool had;
  EnvVar(const std::string& n, const char* value) : name(n), had(std::getenv(n.c_str()) != nullptr) {
    if (had) old = std::getenv(n.c_str());
    if (value) setenv(n.c_str(), value, 1);
    else unsetenv(n.c_str());
  }
  ~EnvVar() {
    if (had) setenv(name.c_str(), old.c_str(), 1);
    else unsetenv(name.c_str());
  }
};

uint16_t port_of(const Result<net::Endpoint>& e) { return e.is_ok() ? e->port : 0; }
}  // namespace

TEST_CASE("controller lookup: --controller/HQ_CONTROLLER, then HQ_CONFIG, then the local cluster") {
  test::TempDir dir;
  std::filesystem::create_directories(dir.path() + "/home/local/state");
  std::ofstream(dir.path() + "/home/local/state/controller.addr") << "127.0.0.1:1111\n";
  std::ofstream(dir.path() + "/hq.toml") << "[controller]\nhost = \"127.0.0.1\"\nport = 2222\n"
                                            "[[node]]\nnames = \"n1\"\ncpus = 1\n[[partition]]\nname = \"p\"\nnodes = \"n1\"\n";
  EnvVar home("HQ_HOME", (dir.path() + "/home").c_str());
  EnvVar ctl("HQ_CONTROLLER", nullptr);
  {
    EnvVar cfg("HQ_CONFIG", nullptr);
    CHECK(port_of(cmd::find_controller()) == 1111);  // the local cluster
    CHECK(cmd::local_cluster_targeted());
  }
  {
    EnvVar cfg("HQ_CONFIG", (dir.path() + "/hq.toml").c_str());
    CHECK(port_of(cmd::find_controller()) == 2222);  // named config beats the local cluster
    CHECK(!cmd::local_cluster_targeted());
    EnvVar named("HQ_CONTROLLER", "127.0.0.1:3333");
    CHECK(port_of(cmd::find_controller()) == 3333);
    CHECK(port_of(cmd::find_controller("127.0.0.1:4444")) == 4444);
  }
  {
    EnvVar cfg("HQ_CONFIG", (dir.path() + "/missing.toml").c_str());
    CHECK(port_of(cmd::find_controller()) == 1111);  // a named file that is not there: no config file
  }
}
