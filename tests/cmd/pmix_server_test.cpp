// The agent's OpenPMIx server in this process: a step's namespace, the variables its ranks
// get, a second server refused. One test case only: PMIx starts once per process.
#include <doctest/doctest.h>

#include <algorithm>
#include <asio/io_context.hpp>

#include "../temp_dir.hpp"
#include "cmd/agent/pmix_server.hpp"
#include "core/pmix_map.hpp"

using namespace hq;
using namespace hq::cmd;

namespace {

bool has(const std::vector<std::string>& env, const std::string& kv) {
  return std::find(env.begin(), env.end(), kv) != env.end();
}

bool has_key(const std::vector<std::string>& env, const std::string& key) {
  return std::any_of(env.begin(), env.end(), [&](const std::string& kv) { return kv.rfind(key + "=", 0) == 0; });
}

}  // namespace

TEST_CASE("pmix server: a step's ranks here get PMIx's variables - one server per process - a namespace goes") {
  test::TempDir dir;
  asio::io_context io;
  PmixServer server(io, dir.path() + "/pmix", "e2", {});
  REQUIRE(server.start());
  CHECK(server.start());  // again: nothing to do
  PmixServer second(io, dir.path() + "/other", "e3", {});
  CHECK(!second.start());

  std::vector<StepNode> layout{{"e1", 2, {0, 1}}, {"e2", 2, {2, 3}}};
  PmixStepMap map = pmix_step_map(12, 3, layout, 1);
  auto envs = server.add(map, dir.path(), getuid(), getgid());
  REQUIRE(envs);
  REQUIRE(envs->size() == 2);
  CHECK(has((*envs)[0], "PMIX_NAMESPACE=slurm.pmix.12.3"));
  CHECK(has((*envs)[0], "PMIX_RANK=2"));
  CHECK(has((*envs)[1], "PMIX_RANK=3"));
  CHECK(has_key((*envs)[1], "PMIX_SERVER_URI41"));
  server.remove(map.nspace);
  CHECK(server.add(map, dir.path(), getuid(), getgid()));  // the name is free again
  server.remove(map.nspace);
}
