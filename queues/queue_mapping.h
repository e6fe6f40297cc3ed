// Maps the scenario's queues onto a device's queue families:
//   DIRECT  -> the first family with GRAPHICS and COMPUTE;
//   COMPUTE -> the first COMPUTE-only family, else another queue of the graphics family,
//              else the very queue DIRECT uses (then it is shared: no overlap possible).
// Pure logic over a plain description of the families, so it is unit tested without a GPU.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"
#include "queues/queue_model.h"

namespace gpuoverlap {

struct QueueFamilyDescription {
  bool graphics = false;
  bool compute = false;
  std::uint32_t queue_count = 0;
  std::uint32_t timestamp_valid_bits = 0;
};

struct MappedQueue {
  std::uint32_t family_index = 0;
  std::uint32_t queue_index = 0;
  // Index of an earlier scenario queue whose device queue this one shares; -1 when it has
  // its own. Work of two scenario queues on one device queue runs in submission order.
  int shares_with = -1;
};

// Contract: the result has one entry per requested type, in the same order.
Result<std::vector<MappedQueue>> map_queues(const std::vector<QueueFamilyDescription>& families,
                                            const std::vector<QueueType>& requested);

}  // namespace gpuoverlap
