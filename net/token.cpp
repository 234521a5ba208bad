#include "net/token.hpp"

#include <cctype>
#include <mbedtls/base64.h>
#include <mbedtls/md.h>
#include <sstream>
#include <sys/random.h>

#include "core/hex.hpp"
#include "core/units.hpp"
#include "hq.pb.h"

namespace hq::net {
namespace {

std::string hmac_sha256(const std::string& key, const std::string& data) {
  unsigned char out[32];
  mbedtls_md_hmac(mbedtls_md_info_from_type(MBEDTLS_MD_SHA256), reinterpret_cast<const unsigned char*>(key.data()),
                  key.size(), reinterpret_cast<const unsigned char*>(data.data()), data.size(), out);
  return std::string(reinterpret_cast<char*>(out), sizeof out);
}

bool equal_constant_time(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

Result<std::string> key_from_hex(const std::string& hex) {
  if (hex.size() < 32) return invalid("key must be at least 16 bytes of hex");
  auto key = from_hex(hex);
  if (!key) return invalid("key is not hex");
  return *key;
}

}  // namespace

Result<Keyring> parse_keyring(const std::string& text, const std::string& source) {
  Keyring ring;
  std::istringstream in(text);
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::vector<std::string> w;
    for (std::string x; words >> x;) w.push_back(x);
    if (w.empty()) continue;
    std::string where = source + ":" + std::to_string(line_no) + ": ";
    uint32_t id = 1;
    if (w.size() == 2) {
      auto n = parse_int(w[0], 1, 1000000);
      if (!n) return invalid(where + "key id must be a number 1-1000000");
      id = static_cast<uint32_t>(*n);
    } else if (w.size() != 1) {
      return invalid(where + "expected \"ID HEXKEY\"");
    }
    auto key = key_from_hex(w.back());
    if (!key) return invalid(where + key.status().message());
    if (!ring.keys.emplace(id, *key).second) return invalid(where + "key id " + std::to_string(id) + " appears twice");
  }
  if (ring.keys.empty()) return invalid(source + ": no keys");
  return ring;
}

std::string format_keyring(const Keyring& ring) {
  std::string out = "# hq keyring: ID HEXKEY; the highest id signs, all verify\n";
  for (const auto& [id, key] : ring.keys) out += std::to_string(id) + " " + to_hex(key) + "\n";
  return out;
}

Result<std::string> mint_token(const Keyring& ring, Identity who, Time now, Duration lifetime) {
  uint32_t id = ring.signing_id();
  if (id == 0) return invalid("empty keyring");
  pb::TokenClaims c;
  c.set_uid(who.uid);
  c.set_gid(who.gid);
  for (uint32_t g : who.groups) c.add_groups(g);
  c.set_issued(now);
  c.set_expires(now + lifetime);
  c.set_key_id(id);
  char nonce[16];
  if (getrandom(nonce, sizeof nonce, 0) != static_cast<ssize_t>(sizeof nonce)) return internal("getrandom failed");
  c.set_nonce(std::string(nonce, sizeof nonce));
  c.set_role(who.role);
  c.set_node(who.node);
  pb::Token t;
  t.set_claims(c.SerializeAsString());
  t.set_mac(hmac_sha256(ring.keys.at(id), t.claims()));
  return t.SerializeAsString();
}

Result<Identity> verify_token(const Keyring& ring, const std::string& token, Time now, Duration skew) {
  pb::Token t;
  pb::TokenClaims c;
  if (token.empty()) return denied("no identity token");
  if (!t.ParseFromString(token) || !c.ParseFromString(t.claims())) return denied("malformed identity token");
  auto key = ring.keys.find(c.key_id());
  if (key == ring.keys.end()) return denied("identity token signed with unknown or retired key " + std::to_string(c.key_id()));
  if (!equal_constant_time(hmac_sha256(key->second, t.claims()), t.mac())) return denied("identity token signature is wrong");
  if (now > c.expires() + skew) return denied("identity token expired");
  if (now + skew < c.issued()) return denied("identity token issued in the future");
  Identity id;
  id.uid = c.uid();
  id.gid = c.gid();
  id.groups.assign(c.groups().begin(), c.groups().end());
  id.role = c.role();
  id.node = c.node();
  id.issued = c.issued();
  id.expires = c.expires();
  id.key_id = c.key_id();
  id.nonce = c.nonce();
  return id;
}

Result<std::string> ca_mac(const Keyring& ring, uint32_t key_id, const std::string& nonce, const std::string& ca_pem) {
  auto key = ring.keys.find(key_id);
  if (key == ring.keys.end()) return not_found("no key " + std::to_string(key_id) + " in the keyring");
  if (nonce.size() < 16) return invalid("CA request nonce too short");
  return hmac_sha256(key->second, "hq-ca-v1" + nonce + ca_pem);
}

Status verify_ca_mac(const Keyring& ring, uint32_t key_id, const std::string& nonce, const std::string& ca_pem,
                     const std::string& mac) {
  auto want = ca_mac(ring, key_id, nonce, ca_pem);
  if (!want) return want.status().with_context("cannot check the controller's CA");
  if (!equal_constant_time(*want, mac))
    return denied("the controller's CA is not vouched for by the cluster secret (a different secret, or a "
                  "man in the middle)");
  return Status::ok();
}

std::string token_text(const std::string& token) {
  std::string out(4 * ((token.size() + 2) / 3) + 1, '\0');
  size_t n = 0;
  mbedtls_base64_encode(reinterpret_cast<unsigned char*>(out.data()), out.size(), &n,
                        reinterpret_cast<const unsigned char*>(token.data()), token.size());
  out.resize(n);
  while (!out.empty() && out.back() == '=') out.pop_back();
  for (char& c : out) c = c == '+' ? '-' : c == '/' ? '_' : c;
  return out;
}

Result<std::string> token_from_text(std::string_view text) {
  if (text.empty() || text.size() > 4096) return invalid("a token is 1 to 4096 characters");
  std::string b64(text);
  for (char& c : b64) {
    if (c == '-') c = '+';
    else if (c == '_') c = '/';
    else if (!std::isalnum(static_cast<unsigned char>(c))) return invalid("a token is base64url text");
  }
  while (b64.size() % 4) b64 += '=';
  std::string out(b64.size(), '\0');
  size_t n = 0;
  if (mbedtls_base64_decode(reinterpret_cast<unsigned char*>(out.data()), out.size(), &n,
                            reinterpret_cast<const unsigned char*>(b64.data()), b64.size()) != 0)
    return invalid("a token is base64url text");
  out.resize(n);
  return out;
}

}  // namespace hq::net
