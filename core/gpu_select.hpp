// Which GPUs of a node a starting job gets: free ones of the asked type, packed into as
// few CPU-affinity groups (GPUs that share their local CPU list) as possible, best-fit
// group first so larger groups stay whole for larger jobs. Pure; thread-safe.
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/node.hpp"

namespace hq {

// `used` is by GPU index (shorter than `gpus` means the rest are free); `type` "" = any.
// Indices in ascending order, or empty when fewer than `count` are free.
std::vector<int32_t> pick_gpus(const std::vector<NodeGpu>& gpus, const std::vector<char>& used, int32_t count,
                               std::string_view type);
int32_t free_gpus_of_type(const std::vector<NodeGpu>& gpus, const std::vector<char>& used, std::string_view type);

}  // namespace hq
