// What each queue records and submits in one frame, derived from a scenario (API neutral):
// the barriers of every dependency (barriers/barrier_planner.h) and the cut of each queue's
// work into submissions where a cross-queue dependency needs a fence (D3D12 Signal/Wait,
// timeline semaphores in Vulkan).
//
// Execution order: the workloads sorted so that each comes after the earlier work on its queue
// and after its producers (file order breaks ties). If no such order exists, some wait could
// never be signalled (queues execute in order, so a fence wait blocks everything behind it on
// its queue): the scenario is rejected before any GPU work with the cycle spelled out.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "barriers/barrier_planner.h"

namespace gpuoverlap {

struct Scenario;

// One submission: consecutive workloads of one queue.
struct Segment {
  std::size_t queue = 0;
  std::vector<std::size_t> workloads;
  std::vector<std::size_t> wait_for;  // producers (on other queues) whose fences it waits for
  bool signals_fence = false;         // its last workload's fence is signalled after it
};

struct FrameFinding {
  std::size_t consumer = 0;    // the workload the finding is about
  std::size_t dependency = 0;  // index into its depends_on; kNoDependency: its draw target
  BarrierFinding finding;
  static constexpr std::size_t kNoDependency = static_cast<std::size_t>(-1);
};

struct FramePlan {
  std::vector<std::size_t> execution_order;  // workload indices
  std::vector<Segment> segments;             // in submission order (a valid order on one queue)
  std::vector<std::size_t> first_segment_of_queue, last_segment_of_queue;
  // barriers.dependencies[i] is depends_on[dependency_refs[i].second] of workload
  // dependency_refs[i].first.
  BarrierPlan barriers;
  std::vector<std::pair<std::size_t, std::size_t>> dependency_refs;
  std::vector<FrameFinding> findings;  // barrier rule findings and unsatisfiable waits
  bool has_errors() const;

  // The plan of workload `consumer`'s dependency number `index`.
  const DependencyPlan& dependency(std::size_t consumer, std::size_t index) const;
};

FramePlan plan_frame(const Scenario& scenario);

// Computes the scenario's plan once and keeps it in Scenario::plan.
void attach_frame_plan(Scenario& scenario);

// The plan attached where the scenario was validated. Contract: attach_frame_plan ran (every
// scenario from the parser or preemption::make_scenario); throws std::logic_error otherwise,
// a programming error rather than bad input.
const FramePlan& frame_plan_of(const Scenario& scenario);

}  // namespace gpuoverlap
