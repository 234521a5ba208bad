// The PMI-1 "simple" wire protocol (what MPICH's built-in PMI client speaks over PMI_FD;
// reference steps-and-mpi.md §2.6), server side, for the tasks of one job step on one
// node: parsing a task's line, and the per-node state that answers it. A line is
// space-separated key=value words; `value=` and `error_msg=` run to the end of the line.
// puts are held until the next barrier; when every local task that still talks is in
// `barrier_in`, the node's pending puts go to every node of the step (the caller runs the
// all-gather: PmiEffects::exchange), and once every node's are back each task gets
// `barrier_out`. gets see the pre-put keys (PMI_process_mapping) and what earlier barriers
// exchanged. `abort` asks the caller to kill the step with the task's exit code. Nothing a
// task sends can make this fail: bad lines get rc=-1 answers, sizes are bounded. Pure.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.hpp"

namespace hq {

// Limits given to clients in `maxes` (Slurm's and MPICH hydra's values) and kept here.
constexpr size_t kPmiKvsNameMax = 256, kPmiKeyMax = 64, kPmiValueMax = 1024;
// The longest line a task may send (a put at every limit is about 1,400 bytes); a longer
// one ends the task's conversation.
constexpr size_t kPmiMaxLine = 4096;
// What one node may put between two barriers, and what a step's store may hold in all.
constexpr size_t kPmiMaxPendingBytes = 4u << 20, kPmiMaxStoreBytes = 64u << 20;

// One parsed line: the words in order (`cmd` or `mcmd` first for a well-formed one).
struct PmiLine {
  std::vector<std::pair<std::string, std::string>> words;
  const std::string* get(std::string_view key) const;
};
// Parses a line without its newline; an error for a word without '=' or an empty key.
Result<PmiLine> parse_pmi_line(std::string_view line);

// This node's part of the step, fixed at launch.
struct PmiStep {
  std::string kvsname;                       // "J.S", as Slurm names it
  int32_t size = 0;                          // every task of the step (PMI_SIZE)
  size_t local_tasks = 0;                    // the tasks here, by local index
  std::map<std::string, std::string> preput;  // PMI_process_mapping
};

// What the caller must do after an event.
struct PmiEffects {
  std::vector<std::pair<size_t, std::string>> replies;  // local task, line with its newline
  std::vector<size_t> close;                            // conversations to end, after the replies
  std::optional<std::string> exchange;                  // run the all-gather with this node's blob
  std::optional<int> abort;                             // kill the step; srun exits with this code
};

class PmiNode {
 public:
  explicit PmiNode(PmiStep step);
  // One line (without its newline) from local task `task`.
  PmiEffects line(size_t task, std::string_view text);
  // Task `task`'s conversation ended (it closed its end, sent a line too long, or exited).
  PmiEffects gone(size_t task);
  // The all-gather this node asked for came back: every node's blob, or why not.
  PmiEffects exchanged(const Result<std::vector<std::string>>& blobs);

 private:
  struct Task {
    bool talking = true;     // not gone, not finalized
    bool in_barrier = false;
    bool in_spawn = false;   // inside an mcmd=spawn ... endcmd block
  };
  void command(size_t task, const PmiLine& l, PmiEffects& fx);
  void put(size_t task, const PmiLine& l, PmiEffects& fx);
  void get(size_t task, const PmiLine& l, PmiEffects& fx);
  void barrier_in(size_t task, PmiEffects& fx);
  void maybe_exchange(PmiEffects& fx);
  Status merge(const std::vector<std::string>& blobs);

  PmiStep step_;
  std::vector<Task> tasks_;
  std::map<std::string, std::string> pending_, store_;
  size_t pending_bytes_ = 0, store_bytes_ = 0;
  bool exchanging_ = false;
};

// A node's pending puts as one blob ("key=value\n" each; neither holds a newline, a key no
// '='), and back; an error for a malformed blob.
std::string encode_pmi_puts(const std::map<std::string, std::string>& puts);
Status decode_pmi_puts(std::string_view blob, std::map<std::string, std::string>& into);

}  // namespace hq
