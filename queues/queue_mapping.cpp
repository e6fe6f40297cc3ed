#include "queues/queue_mapping.h"

#include <optional>

namespace gpuoverlap {

namespace {

std::optional<std::uint32_t> first_family(const std::vector<QueueFamilyDescription>& families,
                                          bool want_graphics) {
  for (std::uint32_t i = 0; i < families.size(); ++i) {
    const auto& f = families[i];
    if (f.queue_count == 0 || !f.compute) continue;
    if (want_graphics == f.graphics) return i;
  }
  return std::nullopt;
}

}  // namespace

Result<std::vector<MappedQueue>> map_queues(const std::vector<QueueFamilyDescription>& families,
                                            const std::vector<QueueType>& requested) {
  const auto graphics_family = first_family(families, true);
  const auto compute_family = first_family(families, false);
  if (!graphics_family)
    return make_error("the device has no queue family with both GRAPHICS and COMPUTE");

  std::vector<std::uint32_t> used_in_family(families.size(), 0);
  std::vector<MappedQueue> mapped;
  std::vector<int> last_user_of_family(families.size(), -1);

  auto take = [&](std::uint32_t family, int scenario_queue) -> std::optional<MappedQueue> {
    if (used_in_family[family] >= families[family].queue_count) return std::nullopt;
    MappedQueue q{family, used_in_family[family]++, -1};
    last_user_of_family[family] = scenario_queue;
    return q;
  };

  // DIRECT queues first, whatever the scenario's order, so they get the graphics family's
  // first queues and a COMPUTE queue that must share, shares a DIRECT queue.
  std::vector<std::size_t> order;
  for (QueueType pass : {QueueType::direct, QueueType::compute})
    for (std::size_t i = 0; i < requested.size(); ++i)
      if (requested[i] == pass) order.push_back(i);
  mapped.resize(requested.size());
  for (std::size_t i : order) {
    const int index = static_cast<int>(i);
    std::optional<MappedQueue> q;
    if (requested[i] == QueueType::direct) {
      q = take(*graphics_family, index);
    } else {
      if (compute_family) q = take(*compute_family, index);
      if (!q) q = take(*graphics_family, index);
    }
    if (!q) {
      // Out of device queues: share the last queue handed out of the preferred family.
      const std::uint32_t family = (requested[i] == QueueType::compute && compute_family &&
                                    last_user_of_family[*compute_family] >= 0)
                                       ? *compute_family
                                       : *graphics_family;
      const int owner = last_user_of_family[family];
      const MappedQueue& owner_queue = mapped[static_cast<std::size_t>(owner)];
      q = MappedQueue{owner_queue.family_index, owner_queue.queue_index,
                      owner_queue.shares_with >= 0 ? owner_queue.shares_with : owner};
    }
    mapped[i] = *q;
  }
  return mapped;
}

}  // namespace gpuoverlap
