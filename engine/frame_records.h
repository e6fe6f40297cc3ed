// A measured frame's records (timeline/records.h) from what the frame loop read of it
// (engine/frame_loop.cpp): the frame's CPU side and the loop thread's interval, each workload's
// stamps, shader clock and timestamps on the CPU clock, and their statuses.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/thread_accounting.h"
#include "engine/loop_phases.h"
#include "engine/scenario_backend.h"
#include "jobs/job_system.h"
#include "queues/stamp_poller.h"
#include "scenarios/scenario.h"
#include "timeline/records.h"

namespace gpuoverlap {

// One frame as the frame loop's steps pass it on, from its CPU phase to its records.
struct LoopFrame {
  std::uint32_t index = 0;  // from the first warm-up frame; training frames do not count
  std::uint32_t frame = 0;  // the stamps' frame number
  bool measured = false;
  std::uint32_t measured_frame = 0;
  std::optional<jobs::FrameJobsResult> cpu_phase;  // with [cpu]
  std::int64_t cpu_start_ns = 0;                   // recording begins
  std::int64_t frame_start_ns = 0;                 // the jobs' release, else cpu_start_ns
  std::int64_t cpu_submitted_ns = 0;
  // The frame loop's thread in the interval closed at this frame's start.
  std::optional<LoopPhaseTimes> phases_of_interval;
  std::optional<ThreadAccounting> accounting_of_interval;
  std::optional<GroupAccounting> workers_of_interval;
  std::optional<double> frame_interval_us;
  std::optional<GpuCalibration> calibration;  // this frame's own, or the latest before it
  bool calibrated = false;                    // a calibration was read for this frame
  bool poller_ready = false;   // the poller was spinning at the release (queues/stamp_poller.h)
  std::int64_t t0_ns = 0;      // the gate's release
  std::int64_t waited_ns = 0;  // the GPU wait's end
  GpuOutcome waited;
  PollResult polled;
  std::vector<std::optional<TimestampTicks>> timestamps;
};

// How a run's measured frames are read into records: the run's settings and device, and the
// loop's state at the frame.
struct RecordReading {
  const Scenario& scenario;
  const StampView& stamps;
  const std::vector<std::uint32_t>& valid_bits;  // per workload, its timestamps' valid bits
  const std::vector<std::uint64_t>& variants;    // per workload, the committed variant it ran
  std::int64_t origin_ns = 0;                    // the first measured frame's gate release
  std::int64_t period_ns = 0;                    // the pace a stutter is judged by; 0: unpaced
  bool held = false;          // the background was held (BackgroundSpec::alternate_frames)
  bool stamping = false;      // RunSettings::stamping
  bool shader_clock = false;  // the device records the shader clock
};

// Appends measured frame `f`'s records to `timeline`: its workloads' (records), then its own
// (frames), which it returns.
const FrameRecord& add_frame_records(ScenarioTimeline& timeline, const LoopFrame& f,
                                     const RecordReading& how);

}  // namespace gpuoverlap
