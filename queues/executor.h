// The contract between the scenario runner and a backend (Vulkan today, D3D12 later).
// API neutral: the runner and its tests build without any GPU API.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "core/result.h"
#include "timeline/records.h"

namespace gpuoverlap {

struct Scenario;

struct RunSettings {
  std::uint32_t frames = 100;               // measured frames (after warm-up)
  std::uint32_t warmup_frames = 10;         // dropped frames at the start
  std::uint32_t frame_timeout_ms = 10'000;  // deadline from gate release to frame completion
  bool priority_fallback = false;           // run at a lower priority when the driver refuses one
  // Timestamp queries around each workload. An end-of-workload timestamp means "all earlier
  // commands on the queue completed", which a driver may implement by draining the queue:
  // measured on H100, it serialises dispatches that would otherwise overlap. Turn off to
  // measure same-queue overlap with the poll clock alone.
  bool timestamp_queries = true;
  // Polled between frames; true stops the scenario after the current frame, keeping what
  // was measured (ScenarioTimeline::failure says "interrupted").
  std::function<bool()> should_stop;
};

// Called after every frame (warm-up included) from the thread that called run().
using ProgressCallback = std::function<void(std::uint32_t frames_done, std::uint32_t frames_total)>;

class ScenarioExecutor {
 public:
  virtual ~ScenarioExecutor() = default;

  // Runs one validated scenario. An Error means nothing was measured (setup failed, e.g. a
  // refused priority); a GPU timeout or device loss during the frames is *not* an Error: it
  // comes back as ScenarioTimeline::failure with the records measured up to that point.
  virtual Result<ScenarioTimeline> run(const Scenario& scenario, const RunSettings& settings,
                                       const ProgressCallback& progress) = 0;
};

}  // namespace gpuoverlap
