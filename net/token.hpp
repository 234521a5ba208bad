// Identity tokens: HMAC-SHA256 over serialized claims (uid, gid, groups, issue and expiry
// time, key id, nonce, role), keyed by a keyring of several secrets by id so the secret
// can be rotated without downtime: the newest key signs, every listed key verifies.
// Keyring file: one "ID HEX" line per key ('#' comments); a lone hex line is key 1.
// Pure functions plus an RNG for nonces; thread-safe.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/status.hpp"
#include "core/time.hpp"

namespace hq::net {

struct Keyring {
  std::map<uint32_t, std::string> keys;  // id -> raw key bytes
  uint32_t signing_id() const { return keys.empty() ? 0 : keys.rbegin()->first; }
};

Result<Keyring> parse_keyring(const std::string& text, const std::string& source);
std::string format_keyring(const Keyring& ring);

struct Identity {
  uint32_t uid = 0, gid = 0;
  std::vector<uint32_t> groups;
  std::string role = "user";   // "user", "node", "controller", or "http" (hq token: HTTP requests only, never a session)
  std::string node;            // role "node": its name
  Time issued = 0, expires = 0;
  uint32_t key_id = 0;
  std::string nonce;
};

constexpr Duration kTokenLifetime = 60;

// A token for `who`, valid from `now` for `lifetime` seconds, signed with the newest key.
Result<std::string> mint_token(const Keyring& ring, Identity who, Time now, Duration lifetime = kTokenLifetime);
// Checks MAC, key id and validity window (with `skew` seconds of clock tolerance).
Result<Identity> verify_token(const Keyring& ring, const std::string& token, Time now, Duration skew = 5);

// The MAC that vouches for the cluster CA sent to a joining node: HMAC-SHA256 with key
// `key_id` over a fixed label, the node's nonce and the CA certificate.
Result<std::string> ca_mac(const Keyring& ring, uint32_t key_id, const std::string& nonce, const std::string& ca_pem);
// Whether `mac` vouches for `ca_pem` (constant-time compare); an error says why not.
Status verify_ca_mac(const Keyring& ring, uint32_t key_id, const std::string& nonce, const std::string& ca_pem,
                     const std::string& mac);

// A token as text for an HTTP header (base64url, no padding), and back (an error for
// anything that is not base64url of at most 4 KiB).
std::string token_text(const std::string& token);
Result<std::string> token_from_text(std::string_view text);

}  // namespace hq::net
