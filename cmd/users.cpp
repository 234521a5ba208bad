#include "cmd/users.hpp"

#include <functional>
#include <memory>
#include <mutex>
#include <sys/stat.h>
#include <vector>

#include "cmd/paths.hpp"
#include "core/units.hpp"

namespace hq::cmd {
namespace {

std::vector<std::string> fields(std::string_view line) {
  std::vector<std::string> f;
  for (std::string_view part : split(line, ':')) f.emplace_back(part);
  return f;
}

// One read of the file and views into it: a client looks up one user once, and a stream
// with a string per field made that lookup cost sbatch about 25 us.
std::vector<PasswdEntry> read_passwd(const std::string& file) {
  std::vector<PasswdEntry> entries;
  std::string text = read_small_file(file);
  std::string_view rest = text;
  while (!rest.empty()) {
    size_t eol = rest.find('\n');
    std::string_view line = rest.substr(0, eol);
    rest = eol == std::string_view::npos ? std::string_view() : rest.substr(eol + 1);
    std::string_view f[7];  // name:password:uid:gid:gecos:home:shell
    size_t n = 0;
    for (std::string_view part : split(line, ':')) {
      if (n == 7) break;
      f[n++] = part;
    }
    if (n < 7) continue;  // malformed line: skip it, never fail
    auto uid = parse_int(f[2], 0, UINT32_MAX), gid = parse_int(f[3], 0, UINT32_MAX);
    if (!uid || !gid) continue;
    entries.push_back({std::string(f[0]), static_cast<uid_t>(*uid), static_cast<gid_t>(*gid), std::string(f[5]),
                       std::string(f[4].substr(0, f[4].find(',')))});
  }
  return entries;
}

// The last passwd file read, kept while the file's identity, size and mtime stay the same:
// a daemon looks users up on every request, and a stat is much cheaper than a parse.
struct PasswdCache {
  std::mutex mu;
  std::string file;
  struct stat seen {};
  std::shared_ptr<const std::vector<PasswdEntry>> entries;
};

bool same_file_state(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino && a.st_size == b.st_size && a.st_mtim.tv_sec == b.st_mtim.tv_sec &&
         a.st_mtim.tv_nsec == b.st_mtim.tv_nsec && a.st_ctim.tv_sec == b.st_ctim.tv_sec && a.st_ctim.tv_nsec == b.st_ctim.tv_nsec;
}

std::shared_ptr<const std::vector<PasswdEntry>> passwd_entries(const std::string& file) {
  static PasswdCache cache;
  struct stat now {};
  if (::stat(file.c_str(), &now) != 0) return std::make_shared<const std::vector<PasswdEntry>>();
  std::lock_guard<std::mutex> lock(cache.mu);
  if (!cache.entries || cache.file != file || !same_file_state(cache.seen, now)) {
    cache.entries = std::make_shared<const std::vector<PasswdEntry>>(read_passwd(file));
    cache.file = file;
    cache.seen = now;
  }
  return cache.entries;
}

std::optional<PasswdEntry> find_entry(const std::string& file, const std::function<bool(const PasswdEntry&)>& match) {
  auto entries = passwd_entries(file);
  for (const PasswdEntry& e : *entries)
    if (match(e)) return e;
  return std::nullopt;
}

}  // namespace

std::optional<PasswdEntry> passwd_by_uid(uid_t uid, const std::string& file) {
  return find_entry(file, [uid](const PasswdEntry& e) { return e.uid == uid; });
}

std::optional<PasswdEntry> passwd_by_name(const std::string& name, const std::string& file) {
  return find_entry(file, [&name](const PasswdEntry& e) { return e.name == name; });
}

std::string user_name(uid_t uid) {
  auto e = passwd_by_uid(uid);
  return e ? e->name : std::to_string(uid);
}

std::optional<std::string> user_of(const std::string& name_or_uid) {
  if (auto uid = parse_int(name_or_uid, 0, INT32_MAX)) return user_name(static_cast<uid_t>(*uid));
  if (passwd_by_name(name_or_uid)) return name_or_uid;
  return std::nullopt;
}

// The group file is read in one read(2) (read_small_file): an ifstream would build the C++
// locale, 0.15 ms of an `scontrol show job` (core/std_streams.hpp).
std::optional<gid_t> group_id(const std::string& name, const std::string& file) {
  std::string text = read_small_file(file);
  for (std::string_view line : split(text, '\n')) {
    std::vector<std::string> f = fields(line);  // name:password:gid:members
    if (f.size() < 3 || f[0] != name) continue;
    if (auto gid = parse_int(f[2], 0, UINT32_MAX)) return static_cast<gid_t>(*gid);
  }
  if (auto gid = parse_int(name, 0, UINT32_MAX)) return static_cast<gid_t>(*gid);
  return std::nullopt;
}

std::vector<uint32_t> groups_of(const std::string& user, gid_t primary, const std::string& file) {
  std::vector<uint32_t> out{primary};
  std::string text = read_small_file(file);
  for (std::string_view line : split(text, '\n')) {
    std::vector<std::string> f = fields(line);  // name:password:gid:member,member
    if (f.size() < 4) continue;
    auto gid = parse_int(f[2], 0, UINT32_MAX);
    if (!gid || static_cast<gid_t>(*gid) == primary) continue;
    for (std::string_view m : split(f[3], ','))
      if (m == user) out.push_back(static_cast<uint32_t>(*gid));
  }
  return out;
}

std::string group_name(gid_t gid, const std::string& file) {
  std::string text = read_small_file(file);
  for (std::string_view line : split(text, '\n')) {
    std::vector<std::string> f = fields(line);
    if (f.size() < 3) continue;
    if (auto id = parse_int(f[2], 0, UINT32_MAX); id && *id == static_cast<int64_t>(gid)) return f[0];
  }
  return std::to_string(gid);
}

}  // namespace hq::cmd
