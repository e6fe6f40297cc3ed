// The preemption loop, written once for every backend (docs/preemption.md): size the load by
// duration, measure it alone, then keep it running (two loads in flight) while the urgent job
// is submitted every period; drain; turn the sequence poller's sightings, timestamps and shader
// clocks into records. Which parts run follows the scenario's workloads: load and urgent (one
// process), urgent only (the parent of a load process), or load only (the load process itself,
// which loads until `hooks.stop_loading`).
//
// One thread records and submits everything, so queues that share a device queue (lavapipe)
// need no lock; a SequencePoller thread times every stamp.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "engine/executor.h"
#include "engine/scenario_backend.h"
#include "scenarios/preemption_spec.h"
#include "scenarios/scenario.h"
#include "timeline/records.h"

namespace gpuoverlap {

struct PreemptionHooks {
  // Load only: continuous loading has begun (calibration and baseline done).
  std::function<void(const ScenarioTimeline& so_far)> on_loading;
  // Load only: polled between submissions; true ends the loading.
  std::function<bool()> stop_loading;
  // Sizes this load was calibrated to by an earlier scenario on this device (one per load
  // part, workload order), and that scenario's name: run at these instead of calibrating
  // again (PreemptionRunInfo::sizes_from). Empty: calibrate.
  std::vector<preemption::LoadSize> known_sizes;
  std::string known_sizes_from;
};

struct PreemptionLoopOutcome {
  ScenarioTimeline timeline;     // with `preemption` set; `failure` says why it ended early
  bool gpu_may_be_busy = false;  // see FrameLoopOutcome
};

// Contract: `scenario` is a validated preemption scenario (Scenario::preemption set) and
// `backend` holds its device objects.
PreemptionLoopOutcome run_preemption_loop(ScenarioBackend& backend, const Scenario& scenario,
                                          const RunSettings& settings,
                                          const ProgressCallback& progress,
                                          const PreemptionHooks& hooks);

}  // namespace gpuoverlap
