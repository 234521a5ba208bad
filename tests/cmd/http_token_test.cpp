// hq token: an HTTP token (role "http") for the caller, of the lifespan asked, that /metrics
// takes and an RPC login (a client's Hello) refuses: a token kept in a file for a scraper
// opens no session.
#include <doctest/doctest.h>

#include <fstream>

#include "controller_harness.hpp"
#include "../temp_dir.hpp"

using namespace hq;
using namespace hq::test;

TEST_CASE("hq token: an HTTP token of the lifespan asked, refused as an RPC login - a user's token is not") {
  TempDir dir;
  std::ofstream(dir.path() + "/secret") << "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n";
  ControllerHarness h("n1", 4, std::make_shared<MemoryLog::Disk>(), Time{1000}, {}, dir.path() + "/secret");
  REQUIRE(h.ctl->load_keys().is_ok());
  net::Identity alice;
  alice.uid = 1000;
  alice.gid = 1000;
  pb::TokenRequest req;
  auto reply = h.ctl->http_token(req, alice);
  REQUIRE(reply.is_ok());
  CHECK(reply->expires() == 1000 + 1800);  // scontrol token's default lifespan
  req.set_lifespan(86401);
  CHECK_FALSE(h.ctl->http_token(req, alice).is_ok());
  req.set_lifespan(60);
  auto short_lived = h.ctl->http_token(req, alice);
  REQUIRE(short_lived.is_ok());
  CHECK(short_lived->expires() == 1060);

  auto raw = net::token_from_text(reply->token());
  REQUIRE(raw.is_ok());
  auto who = net::verify_token(h.ctl->keyring(), *raw, 1000);
  REQUIRE(who.is_ok());
  CHECK(who->role == "http");
  CHECK(who->uid == 1000);
  pb::Hello hello;
  hello.set_role("client");
  hello.set_token(*raw);
  auto login = h.ctl->authenticate(hello);
  REQUIRE_FALSE(login.is_ok());
  CHECK(login.status().message().find("not valid for role") != std::string::npos);
  auto user_token = net::mint_token(h.ctl->keyring(), alice, 1000);  // what the auth socket gives
  REQUIRE(user_token.is_ok());
  hello.set_token(*user_token);
  CHECK(h.ctl->authenticate(hello).is_ok());
  CHECK_FALSE(net::token_from_text("not base64!").is_ok());
  CHECK(net::token_from_text(net::token_text(*user_token)).value() == *user_token);
}
