// Barriers as a scenario states them, in D3D12 terms. A dependency "consumer depends on
// producer" is separated by a barrier of one kind:
//   none   - no barrier at all (the work may overlap; data races are the user's choice);
//   legacy - one ResourceBarrier transition of the producer's output, placed right before
//            the consumer (D3D12_RESOURCE_BARRIER_FLAG_NONE);
//   split  - the same transition split: BEGIN_ONLY right after the producer, END_ONLY right
//            before the consumer.
// The D3D12 states of a transition follow from the producer's and consumer's kinds.
#pragma once

#include <optional>
#include <string_view>

#include "queues/d3d12_types.h"
#include "workloads/workload.h"

namespace gpuoverlap {

enum class BarrierKind { none, legacy, split };

std::string_view to_string(BarrierKind kind);
std::optional<BarrierKind> parse_barrier_kind(std::string_view text);

struct LegacyTransition {
  D3D12_RESOURCE_STATES before;
  D3D12_RESOURCE_STATES after;
};

// The state the producer leaves its output in (UNORDERED_ACCESS for a dispatch's buffer,
// RENDER_TARGET for a draw's target) and the state the consumer reads it in
// (NON_PIXEL_SHADER_RESOURCE for a dispatch, PIXEL_SHADER_RESOURCE for a draw), as in MJP's app.
LegacyTransition transition_between(WorkloadKind producer, WorkloadKind consumer);

}  // namespace gpuoverlap
