// sinfo's rows: nodes grouped as Slurm 22.05's sinfo groups them (per partition, and per
// the values of the fields shown: a node whose STATE or REASON differs is another row;
// with -N one row per node and partition; with -R partitions do not count), filtered by
// -p/-n/-t/-r/-d, sorted by -S, and each field's value for a row. One thread (a client's).
#pragma once
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/sinfo_format.hpp"
#include "hq.pb.h"

namespace hq::cmd {

struct SinfoOptions {
  bool node_oriented = false;  // -N
  bool exact = false;          // -e
  bool reasons = false;        // -R
  bool responding_only = false, dead_only = false;  // -r, -d
  std::vector<std::string> partitions;              // -p; empty: all
  std::optional<std::set<std::string>> nodes;       // -n, expanded
  std::optional<SinfoStateFilter> states;           // -t (-R alone: down, fail, drain)
};

struct SinfoRow {
  const pb::Partition* part = nullptr;
  int part_index = -1;  // in the reply's (the config's) partition order
  std::vector<const pb::Node*> nodes;
};

SinfoNodeState sinfo_state_of(const pb::Node& n);

// The rows for `format`'s fields, in Slurm's order of creation (not yet sorted).
std::vector<SinfoRow> sinfo_rows(const pb::NodesReply& reply, const ColumnFormat& format, const SinfoOptions& o);

// -S: keys as Slurm's ("#P,-t", "N", "-D,P"...); '-' reverses, '#P' is the config's order.
void sort_sinfo_rows(std::vector<SinfoRow>& rows, std::string_view keys);

// A row's value for a field code; `cluster` for CLUSTER.
std::string sinfo_value(const SinfoRow& row, char code, const std::string& cluster);

// A column after the format's (hq's own): a row's value, or its title for nullptr.
using SinfoExtra = std::function<std::string(const SinfoRow*)>;

// Prints the header (unless `header` is false) and the rows. With `fit_partition` and
// `fit_nodelist`, the PARTITION and NODELIST columns are as wide as their longest value
// (at least 9), as Slurm's default layouts are.
void print_sinfo(const std::vector<SinfoRow>& rows, const ColumnFormat& format, const std::string& cluster,
                 bool header, bool fit_partition, bool fit_nodelist, const SinfoExtra& extra = {});

// sinfo itself (`args[0]` its name): options parsed, then `fetch` asked for the cluster's
// nodes (with the topology's blocks for --blocks; again every -i seconds) and the answer
// printed. Returns the exit code.
int sinfo_with(const std::vector<std::string>& args, const std::function<Result<pb::NodesReply>(bool)>& fetch);

}  // namespace hq::cmd
