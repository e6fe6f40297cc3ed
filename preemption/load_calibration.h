// Sizing a load by duration: GPUs differ by orders of magnitude (and an H100 runs pixel
// shaders on only 4 of its 132 SMs), so a preemption load is given as `target_ms` and sized on
// the device at the start of the run. Pure logic: the backend hands in how to measure one size.
//
// Method: start small, grow the part's dimensions in a fixed order (at most x16 per probe, so
// no probe runs more than 16 times longer than the one before it) until a probe takes at
// least half the target, then scale linearly to the target and measure that size once more.
// Every dimension stops at its bound; a load that cannot reach the target at its bounds runs
// at the bounds and says so.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/result.h"
#include "scenarios/preemption_spec.h"

namespace gpuoverlap::preemption {

enum class Dimension { groups, iterations, draws };

// How one load part is sized: where it starts, which dimensions grow (in order; a dimension
// the spec gives explicitly never changes) and their bounds.
struct PartPlan {
  LoadSize start;
  LoadSize bounds;  // per dimension; rows is fixed
  std::vector<Dimension> growth;
};

// The parts of a load in workload order (make_scenario): one, or graphics then compute for
// graphics_and_compute. `max_groups` is the device's bound on groups (its dispatch limit).
std::vector<PartPlan> plan_parts(const PreemptionSpec& spec, std::uint32_t max_groups);

// The duration each part is calibrated to: the target, halved for two parts.
double part_target_ms(const PreemptionSpec& spec);

using MeasureLoadMs = std::function<Result<double>(const LoadSize&)>;

struct PartCalibration {
  LoadSize size;
  std::vector<std::pair<LoadSize, double>> probes;  // every size measured, in order, with ms
  bool reached_target = true;                       // the last probe is within [0.5, 2] x target
  std::string note;                                 // why not, when not
};

// Contract: `measure` runs the size alone on the device and returns its duration, or an error
// (a deadline passed, device lost), which ends the calibration.
Result<PartCalibration> calibrate_part(const PartPlan& plan, double target_ms,
                                       const MeasureLoadMs& measure);

// Scales the growth dimensions of `size` by `factor` (> 1: in growth order, each up to its
// bound; < 1: in reverse order, each down to 1). Returns the factor actually applied.
double scale_size(LoadSize& size, const PartPlan& plan, double factor);

}  // namespace gpuoverlap::preemption
