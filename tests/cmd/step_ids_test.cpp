// StepIds: step ids per job from 0, kept in a file so that a restarted agent (a new StepIds)
// goes on from the next one; a job's ended run starts again from 0; a damaged file is 0.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "cmd/agent/step_ids.hpp"
#include "../temp_dir.hpp"

using namespace hq::cmd;

TEST_CASE("step ids: per job from 0, kept across a restart in the job's file, from 0 again after the run") {
  hq::test::TempDir dir;
  std::string file = dir.path() + "/step_ids";
  StepIds ids;
  CHECK(ids.issue(7, file) == 0);
  CHECK(ids.issue(7, file) == 1);
  CHECK(ids.issue(8, "") == 0);  // no file: nothing kept
  StepIds restarted;
  CHECK(restarted.issue(7, file) == 2);
  CHECK(restarted.issue(8, "") == 0);
  restarted.forget(7);
  std::filesystem::remove(file);  // the run's files go with it
  CHECK(restarted.issue(7, file) == 0);
  std::ofstream(file) << "garbage, and longer than a count\n";
  StepIds damaged;
  CHECK(damaged.issue(7, file) == 0);
  CHECK(damaged.issue(7, file) == 1);
  StepIds after_damage;  // the file holds the count alone again
  CHECK(after_damage.issue(7, file) == 2);
}
