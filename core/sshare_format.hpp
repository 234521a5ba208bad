// sshare's output, as Slurm 22.05 prints it: which association rows a command line selects
// (-a, -u, -U, -A; without -a only the caller's user rows, every account row), the columns
// (default, -l, -o/--format with %N / %-N widths), widths and justification, the tree's
// indentation, blank cells (root row, account rows), "inf" LevelFS, -n, -p and -P.
// Pure; thread-safe.
#pragma once
#include <string>
#include <vector>

#include "core/fair_share.hpp"
#include "core/status.hpp"

namespace hq {

struct ShareOptions {
  bool all = false, users_only = false, long_format = false, partitions = false;
  bool noheader = false, parsable = false, parsable2 = false;
  std::vector<std::string> accounts, users;
  std::string format;   // -o/--format as given ("" the default or -l's)
  std::string caller;   // who asks: without -a or -u, only their user rows
  std::string cluster;  // the Cluster column
};

// The rows of `all` (FairShare::rows() order) a command line selects: every account row (or
// those -A names, at the top, with their own users only), and the user rows of -a (all),
// -u (those), else the caller's.
std::vector<ShareRow> sshare_rows(const std::vector<ShareRow>& all, const ShareOptions& opt);

// The rows of `all` (FairShare::rows() order) sshare lists for `opt`, then the text.
// An unknown --format field is an error in sshare's words.
Result<std::string> render_sshare(const std::vector<ShareRow>& all, const ShareOptions& opt);

// sshare -e: the field names, four to a line.
std::string sshare_helpformat();

}  // namespace hq
