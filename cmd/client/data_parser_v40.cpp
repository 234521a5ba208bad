#include "cmd/client/data_parser_v40.hpp"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

namespace hq::cmd {
namespace {

// The terminal the client runs in: stdin's, else stdout's, else stderr's; "" without one.
std::string client_source() {
  for (int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO})
    if (isatty(fd))
      if (const char* name = ttyname(fd)) return name;
  return "";
}

std::string user_of(uid_t uid) {
  const passwd* p = getpwuid(uid);
  return p && p->pw_name ? p->pw_name : "";
}

std::string group_of(gid_t gid) {
  const group* g = getgrgid(gid);
  return g && g->gr_name ? g->gr_name : "";
}

}  // namespace

MetaV40 client_meta_v40(std::vector<std::string> command, std::string cluster) {
  return {client_source(), user_of(getuid()), group_of(getgid()), std::move(command), std::move(cluster)};
}

void write_meta_v40(JsonStream& j, const MetaV40& meta) {
  j.object("meta");
  j.object("plugin").str("type", "").str("name", "").str("data_parser", "data_parser/v0.0.40");
  j.str("accounting_storage", "accounting_storage/slurmdbd").end();
  j.object("client").str("source", meta.source).str("user", meta.user).str("group", meta.group).end();
  j.array("command");
  for (const auto& w : meta.command) j.item(w);
  j.end();
  j.object("slurm");
  j.object("version").str("major", "23").str("micro", "10").str("minor", "11").end();
  j.str("release", "23.11.10").str("cluster", meta.cluster).end();
  j.end();
}

void finish_envelope_v40(JsonStream& j, const MetaV40& meta) {
  write_meta_v40(j, meta);
  j.array("errors").end().array("warnings").end().end();
}

void no_val(JsonStream& j, const std::string& key, int64_t v) {
  bool set = v != kNoLimit;
  j.object(key).boolean("set", set).boolean("infinite", !set).integer("number", set ? v : 0).end();
}

void no_val_real(JsonStream& j, const std::string& key, double v, bool set, bool infinite) {
  j.object(key).boolean("set", set).boolean("infinite", !set && infinite).real("number", set ? v : 0.0).end();
}

void tres_array(JsonStream& j, const std::string& key, const TresList& tres) {
  j.array(key);
  for (const auto& [name, count] : tres) {
    size_t slash = name.find('/');
    j.object()
        .str("type", slash == std::string::npos ? name : name.substr(0, slash))
        .str("name", slash == std::string::npos ? "" : name.substr(slash + 1))
        .integer("id", tres_id(name))
        .integer("count", count)
        .end();
  }
  j.end();
}

}  // namespace hq::cmd
