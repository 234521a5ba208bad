// Job step views for clients: `scontrol show step` / `hq show step`, `squeue -s` and the
// steps under `hq show job`, from the controller's StepQuery; and a node's own
// `hq node list-jobs|list-steps|list-pids` from its agent's step socket. One thread.
#pragma once
#include <string>
#include <vector>

#include "hq.pb.h"

namespace hq::cmd {

// scontrol show step [J[.S]]: running steps (with `ended`, as hq show step: ended ones too).
int show_steps(const std::string& prog, const std::vector<std::string>& names, bool json, bool ended);
// squeue -s [J.S,...] [-j IDS]: running steps, one line each (only those named in `steps`,
// when it names any).
int queue_steps(const std::string& prog, const std::vector<uint64_t>& job_ids, const std::vector<std::string>& steps,
                bool header, bool long_format, bool json);
// hq show job's "Step=" lines for one job (fetched per call; nothing when there are none).
void print_job_steps(uint64_t job_id);
// hq node list-jobs|list-steps|list-pids [--json] [--socket PATH].
int run_node_list(const std::string& what, const std::vector<std::string>& args);

}  // namespace hq::cmd
