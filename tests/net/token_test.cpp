#include <doctest/doctest.h>

#include "hq.pb.h"
#include "net/token.hpp"

using namespace hq;
using namespace hq::net;

namespace {
Keyring ring(const std::string& text) {
  auto r = parse_keyring(text, "secret");
  REQUIRE_MESSAGE(r.is_ok(), r.status().message());
  return *r;
}
const char* kKey1 = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
const char* kKey2 = "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100";
}  // namespace

TEST_CASE("tokens: mint and verify - identity comes back intact") {
  Keyring r = ring(kKey1);
  CHECK(r.signing_id() == 1);
  Identity who;
  who.uid = 1000;
  who.gid = 100;
  who.groups = {100, 27};
  auto tok = mint_token(r, who, 1000);
  REQUIRE(tok.is_ok());
  auto id = verify_token(r, *tok, 1030);
  REQUIRE_MESSAGE(id.is_ok(), id.status().message());
  CHECK(id->uid == 1000);
  CHECK(id->groups == std::vector<uint32_t>{100, 27});
  CHECK(id->expires == 1060);
  CHECK(id->nonce.size() == 16);
  CHECK(*mint_token(r, who, 1000) != *tok);  // fresh nonce each time
}

TEST_CASE("tokens: expired, future, forged, wrongly signed and garbage tokens are refused") {
  Keyring r = ring(kKey1);
  Identity who;
  who.uid = 1000;
  auto tok = *mint_token(r, who, 1000);
  CHECK(verify_token(r, tok, 1066).status().message() == "identity token expired");
  CHECK(verify_token(r, tok, 990).status().message() == "identity token issued in the future");
  // Forge: change the uid inside the claims, keep the MAC.
  pb::Token t;
  REQUIRE(t.ParseFromString(tok));
  pb::TokenClaims c;
  REQUIRE(c.ParseFromString(t.claims()));
  c.set_uid(0);
  t.set_claims(c.SerializeAsString());
  CHECK(verify_token(r, t.SerializeAsString(), 1001).status().message() == "identity token signature is wrong");
  Keyring other = ring(kKey2);
  CHECK(verify_token(other, tok, 1001).status().message() == "identity token signature is wrong");
  CHECK(verify_token(r, "", 1001).status().code() == Code::kDenied);
  CHECK(verify_token(r, "\xff\x01garbage", 1001).status().code() == Code::kDenied);
}

TEST_CASE("keyring: rotation signs with the newest key while older keys still verify") {
  Keyring old_ring = ring(std::string("1 ") + kKey1);
  Keyring rotated = ring(std::string("1 ") + kKey1 + "\n2 " + kKey2 + "\n");
  CHECK(rotated.signing_id() == 2);
  Identity who;
  auto old_tok = *mint_token(old_ring, who, 100);
  auto new_tok = *mint_token(rotated, who, 100);
  CHECK(verify_token(rotated, old_tok, 101).is_ok());   // old tokens still accepted
  CHECK(verify_token(rotated, new_tok, 101)->key_id == 2);
  Keyring retired = ring(std::string("2 ") + kKey2);
  CHECK(verify_token(retired, old_tok, 101).status().message().find("retired key 1") != std::string::npos);
  CHECK(parse_keyring(format_keyring(rotated), "x")->keys == rotated.keys);
}

TEST_CASE("keyring: bad files name the line") {
  CHECK(parse_keyring("", "s").status().message() == "s: no keys");
  CHECK(parse_keyring("1 zz", "s").status().message().find("s:1:") == 0);
  CHECK(parse_keyring(std::string("# c\n1 ") + kKey1 + "\n1 " + kKey2, "s").status().message().find("s:3: key id 1 appears twice") == 0);
  CHECK(parse_keyring("1 2 3", "s").status().message().find("s:1: expected") == 0);
  CHECK(parse_keyring("abcd", "s").status().message().find("at least 16 bytes") != std::string::npos);
}

TEST_CASE("CA MAC: vouches for exactly this CA and nonce under the cluster secret") {
  auto ring = parse_keyring("1 00112233445566778899aabbccddeeff\n2 ffeeddccbbaa99887766554433221100\n", "test");
  REQUIRE(ring.is_ok());
  std::string nonce(16, 'n'), ca = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
  auto mac = ca_mac(*ring, 2, nonce, ca);
  REQUIRE(mac.is_ok());
  CHECK(verify_ca_mac(*ring, 2, nonce, ca, *mac).is_ok());
  CHECK(!verify_ca_mac(*ring, 2, nonce, ca + "x", *mac));              // a swapped certificate
  CHECK(!verify_ca_mac(*ring, 2, std::string(16, 'm'), ca, *mac));     // a replayed answer
  CHECK(!verify_ca_mac(*ring, 1, nonce, ca, *mac));                    // another key
  auto other = parse_keyring("1 0123456789abcdef0123456789abcdef\n", "test");
  CHECK(verify_ca_mac(*other, 2, nonce, ca, *mac).message().find("no key 2") != std::string::npos);
  CHECK(!ca_mac(*ring, 2, "short", ca));
}
