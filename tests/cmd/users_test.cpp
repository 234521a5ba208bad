#include <doctest/doctest.h>

#include <fstream>

#include "../temp_dir.hpp"
#include "cmd/users.hpp"

using namespace hq::cmd;

namespace {
std::string user_name_in(uid_t uid, const std::string& file) {
  auto e = passwd_by_uid(uid, file);
  return e ? e->name : "";
}
}  // namespace

TEST_CASE("users: /etc/passwd is read directly - malformed lines are skipped") {
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

TEST_CASE("users: a passwd file read once is read again when it changes - a rename over it, or a rewrite in place") {
  hq::test::TempDir dir;
  std::string file = dir.path() + "/passwd";
  std::ofstream(file) << "alice:x:1000:100:Alice:/home/alice:/bin/bash\n";
  CHECK(user_name_in(1000, file) == "alice");
  CHECK(!passwd_by_uid(1001, file));
  {  // as useradd does: a new file renamed over the old
    std::ofstream(file + ".new") << "alice:x:1000:100:Alice:/home/alice:/bin/bash\nbob:x:1001:100::/home/bob:/bin/sh\n";
    REQUIRE(std::rename((file + ".new").c_str(), file.c_str()) == 0);
  }
  CHECK(passwd_by_uid(1001, file)->name == "bob");
  std::ofstream(file, std::ios::trunc) << "carol:x:1000:100:Carol:/home/carol:/bin/bash\n";  // same uid, another name
  CHECK(user_name_in(1000, file) == "carol");
  CHECK(!passwd_by_uid(1001, file));
}

TEST_CASE("users: group ids come from /etc/group - a number is its own gid") {
  hq::test::TempDir dir;
  std::string file = dir.path() + "/group";
  std::ofstream(file) << "root:x:0:\n"
                         "garbage\n"
                         "odd:x:nan:\n"
                         "research:x:2001:alice,bob\n";
  CHECK(group_id("research", file) == gid_t{2001});
  CHECK(group_id("root", file) == gid_t{0});
  CHECK(!group_id("odd", file));
  CHECK(!group_id("nobody-here", file));
  CHECK(group_id("4242", file) == gid_t{4242});
  CHECK(!group_id("research", dir.path() + "/missing"));
  CHECK(groups_of("alice", 100, file) == std::vector<uint32_t>{100, 2001});  // the primary first
  CHECK(groups_of("carol", 100, file) == std::vector<uint32_t>{100});
  CHECK(groups_of("bob", 2001, file) == std::vector<uint32_t>{2001});      // not twice
}

#include "cmd/keys.hpp"

TEST_CASE("keyring files: rotate adds a signing key, retire removes one, the watcher reloads") {
  hq::test::TempDir dir;
  REQUIRE(hq::cmd::keygen(dir.path(), "t").is_ok());
  std::string secret = dir.path() + "/secret";
  hq::cmd::KeyringWatcher watcher(secret);
  REQUIRE(watcher.load().is_ok());
  CHECK(watcher.keys().signing_id() == 1);
  auto id = hq::cmd::rotate_keyring(secret);
  REQUIRE(id.is_ok());
  CHECK(*id == 2);
  CHECK(watcher.refresh().find("signing key 2, 2 keys") != std::string::npos);
  CHECK(watcher.refresh().empty());  // unchanged: nothing to do
  CHECK(hq::cmd::retire_key(secret, 1).is_ok());
  CHECK(watcher.refresh().find("1 keys") != std::string::npos);
  CHECK(!hq::cmd::retire_key(secret, 2).is_ok());  // the last key stays
  CHECK(!hq::cmd::retire_key(secret, 7).is_ok());
  std::ofstream(secret) << "garbage\n";
  CHECK(watcher.refresh().find("keeping the previous keys") == 0);
  CHECK(watcher.keys().signing_id() == 2);
}
