// The frames and helpers that the tests of the barrier planner share (barrier_planner_test.cpp,
// barrier_subresources_test.cpp, barrier_texture_writes_test.cpp, barrier_cross_queue_test.cpp,
// barrier_aliasing_test.cpp). In a namespace of their own: a unity batch may hold another test
// file's helpers of the same names.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "barriers/barrier_planner.h"

namespace gpuoverlap::barrier_tests {

inline std::vector<PlannerWorkload> two_queues() {
  return {{"A", WorkloadKind::compute, 0, QueueType::direct},
          {"G", WorkloadKind::graphics, 0, QueueType::direct},
          {"B", WorkloadKind::compute, 0, QueueType::direct},
          {"Q", WorkloadKind::compute, 1, QueueType::compute}};
}

inline BarrierRequest request(BarrierKind kind) {
  BarrierRequest r;
  r.kind = kind;
  return r;
}

inline bool plan_has(const BarrierPlan& plan, const std::string& rule) {
  return std::any_of(plan.findings.begin(), plan.findings.end(),
                     [&](const BarrierPlanFinding& f) { return f.finding.rule == rule; });
}

// A mip chain on a declared texture: each level's draw reads the level before.
inline std::vector<PlannerWorkload> mip_chain(std::size_t levels) {
  std::vector<PlannerWorkload> draws;
  for (std::size_t m = 0; m < levels; ++m)
    draws.push_back({"M" + std::to_string(m), WorkloadKind::graphics, 0, QueueType::direct,
                     TextureTarget{0, static_cast<std::uint32_t>(m), 0}, m});
  return draws;
}
inline const std::vector<PlannerTexture> kChain = {{"T", {3, 1}}};

}  // namespace gpuoverlap::barrier_tests
