// sbatch --uid/--gid on the controller: only root may submit a job that runs as another
// user or group; the user's groups come from the controller's /etc/group.
#include <doctest/doctest.h>

#include "cmd/users.hpp"
#include "controller_harness.hpp"

using namespace hq;
using hq::test::ControllerHarness;

TEST_CASE("sbatch --uid/--gid: root submits a job that runs as another user - anyone else is refused") {
  ControllerHarness h("n1");
  auto req = ControllerHarness::job_request("as-nobody");
  req.set_as_uid(65534);
  auto refused = h.submit_request(req, ControllerHarness::user(1000));
  REQUIRE_FALSE(refused.is_ok());
  CHECK(refused.status().message() == "--uid only permitted by root user");
  auto group_only = ControllerHarness::job_request("as-group");
  group_only.set_as_gid(0);
  CHECK(h.submit_request(group_only, ControllerHarness::user(1000)).status().message() == "--gid only permitted by root user");
  auto made = h.submit_request(req, ControllerHarness::user(0));
  REQUIRE(made.is_ok());
  pb::QueueRequest q;
  q.add_job_ids(made->job_id());
  auto shown = h.ctl->queue(q, net::Identity{});
  REQUIRE(shown.jobs_size() == 1);
  CHECK(shown.jobs(0).spec().uid() == 65534);
  CHECK(shown.jobs(0).spec().user() == cmd::user_name(65534));
  auto unknown = ControllerHarness::job_request("as-ghost");
  unknown.set_as_uid(4294967290u);
  CHECK(h.submit_request(unknown, ControllerHarness::user(0)).status().message().rfind("Invalid --uid specification", 0) == 0);
}
