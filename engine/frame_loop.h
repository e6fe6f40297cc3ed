// The frame loop, written once for every backend: per frame, record and
// submit with every queue held at the gate, arm the stamp poller, release the gate, wait with
// a deadline, then turn the stamps, timestamps and shader clocks into records. Warm-up
// frames, a workflow's training frames and the background processing modes are applied here;
// a frame past its deadline is diagnosed (queues/deadline_diagnosis.h) and ends the run with
// what was measured so far.
#pragma once

#include "engine/executor.h"
#include "engine/scenario_backend.h"
#include "scenarios/scenario.h"
#include "timeline/records.h"

namespace gpuoverlap {

struct FrameLoopOutcome {
  // The records measured (all of them, also when the run failed: `failure` says why it
  // ended early) and the meta the backend reported, completed by the loop.
  ScenarioTimeline timeline;
  // Work of this scenario may still run on the GPU (a frame past its deadline that did not
  // finish in the grace period, or a failed submission): the backend must not free what the
  // GPU may still use.
  bool gpu_may_be_busy = false;
};

// Contract: `scenario` is validated and `backend` holds its device objects; the loop starts
// and stops the backend's background session, if any.
FrameLoopOutcome run_frames(ScenarioBackend& backend, const Scenario& scenario,
                            const RunSettings& settings, const ProgressCallback& progress);

}  // namespace gpuoverlap
