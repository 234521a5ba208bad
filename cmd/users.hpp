// User names from /etc/passwd and group ids from /etc/group, read directly. The static binary must not call
// getpwuid()/getpwnam(): for a uid that is not in /etc/passwd, glibc then dlopen()s
// further NSS modules (e.g. libnss_systemd), which crashes a static program. Users known
// only to LDAP/SSSD therefore show as their uid number. Thread-safe (no shared state).
#pragma once
#include <optional>
#include <cstdint>
#include <string>
#include <sys/types.h>
#include <vector>

namespace hq::cmd {

struct PasswdEntry {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;
  std::string home;
  std::string gecos;  // up to its first ',' (sreport's "Proper Name")
};

std::optional<PasswdEntry> passwd_by_uid(uid_t uid, const std::string& file = "/etc/passwd");
std::optional<PasswdEntry> passwd_by_name(const std::string& name, const std::string& file = "/etc/passwd");
// The name for `uid`, or the uid as a decimal string.
std::string user_name(uid_t uid);
// A user as squeue's and scancel's -u take one: a name in /etc/passwd, or a uid (its name,
// or the number when it has none); nullopt for a name nobody has.
std::optional<std::string> user_of(const std::string& name_or_uid);
// The gid of a group named in /etc/group; a decimal name is taken as the gid itself.
std::optional<gid_t> group_id(const std::string& name, const std::string& file = "/etc/group");
// The groups `user` is a member of in /etc/group, besides `primary` (which comes first).
std::vector<uint32_t> groups_of(const std::string& user, gid_t primary, const std::string& file = "/etc/group");
// The name of group `gid` in /etc/group, or the gid as a decimal string.
std::string group_name(gid_t gid, const std::string& file = "/etc/group");

}  // namespace hq::cmd
