// What Slurm 23.11's data_parser v0.0.40 writes around and inside sacctmgr's and sshare's
// --json records: the envelope's "meta" (a command-line client's), the "set/infinite/number"
// objects of numbers that may be unset, and TRES lists. One thread (a client's).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "cmd/client/json_stream.hpp"
#include "core/acct_model.hpp"

namespace hq::cmd {

// What "meta" says of the client: its terminal, user and group, the command as the tool
// passes it, and the cluster.
struct MetaV40 {
  std::string source, user, group;
  std::vector<std::string> command;
  std::string cluster;
};
// This process's: the terminal of stdin, stdout or stderr ("" without one), the names of
// its uid and gid.
MetaV40 client_meta_v40(std::vector<std::string> command, std::string cluster);
// "meta": plugin (data_parser/v0.0.40, accounting_storage/slurmdbd), client, command, and
// Slurm 23.11.10's version with the cluster.
void write_meta_v40(JsonStream& j, const MetaV40& meta);
// The envelope's end: meta, then empty "errors" and "warnings"; closes the root.
void finish_envelope_v40(JsonStream& j, const MetaV40& meta);

// {"set", "infinite", "number"}: kNoLimit is infinite (as slurmdbd sends an unset limit).
void no_val(JsonStream& j, const std::string& key, int64_t v);
// The same with a double; `set` false gives {false, infinite, 0.0}.
void no_val_real(JsonStream& j, const std::string& key, double v, bool set, bool infinite = true);
// [{"type", "name", "id", "count"}] ("gres/gpu": type gres, name gpu).
void tres_array(JsonStream& j, const std::string& key, const TresList& tres);

}  // namespace hq::cmd
