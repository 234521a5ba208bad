#include <doctest/doctest.h>

#include <fstream>

#include "../temp_dir.hpp"
#include "cmd/users.hpp"

using namespace hq::cmd;

TEST_CASE("users: /etc/passwd is read directly; malformed lines are skipped") {
  hq::test::TempDir dir;
  std::string file = dir.path() + "/passwd";
  std::ofstream(file) << "root:x:0:0:root:/root:/bin/bash\n"
                         "broken line\n"
                         "bad:x:notanumber:1:x:/:/bin/sh\n"
                         "alice:x:1000:100:Alice:/home/alice:/bin/bash\n";
  auto a = passwd_by_uid(1000, file);
  REQUIRE(a);
  CHECK(a->name == "alice");
  CHECK(a->gid == 100);
  CHECK(a->home == "/home/alice");
  CHECK(passwd_by_name("root", file)->uid == 0);
  CHECK(!passwd_by_uid(4242, file));
  CHECK(!passwd_by_name("bad", file));
  CHECK(!passwd_by_uid(1, dir.path() + "/missing"));
  CHECK(user_name(0) == "root");
  CHECK(user_name(4294967290u) == "4294967290");  // unknown: the number, and no crash
}
