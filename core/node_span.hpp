// A node's span out of service, as the accounting store keeps it (Slurm's event table's
// node events): DOWN (fell silent, GPUs short) or DRAIN (an operator's), from when it began
// to when it ended. core/node_spans.hpp makes them from events; sacctmgr lists them.
#pragma once
#include <cstdint>
#include <string>

#include "core/time.hpp"

namespace hq {

struct NodeSpan {
  std::string node;
  std::string state;   // "DOWN" or "DRAIN"
  std::string reason;
  uint32_t uid = 0;    // who drained it (DOWN: 0, the controller)
  Time start = 0, end = 0;  // end 0: still
  int64_t cpus = 0, mem_mib = 0, gpus = 0;  // what the node had then
};

}  // namespace hq
