// The frame loop's own parts of meta.json (engine/frame_loop.h): the CPU side's, the threads'
// scheduling, the background session's (its commit wait included) and the GPU clock's drift.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "background/background_spec.h"
#include "jobs/cpu_spec.h"
#include "timeline/clock_conversion.h"

namespace gpuoverlap {

namespace background {
class BackgroundSession;
}
namespace jobs {
class JobSystem;
}

// How the GPU clock moves against the CPU clock over the run, from the per-frame calibrations:
// the rate difference (ppm, least squares) and how far single calibrations stray from it.
// Contract: `calibrations` is not empty.
nlohmann::json calibration_drift(const std::vector<GpuCalibration>& calibrations);

// meta.json's "cpu": the frame's CPU side as it ran, with the workers' figures (`job_system`
// may be null) and the run's stutters.
nlohmann::json cpu_meta(const jobs::CpuFrameSpec& cpu, const jobs::JobSystem* job_system,
                        std::uint64_t stutters, std::uint32_t injected_frame_delay_us);

// The background session's part of meta.json, after it stopped.
nlohmann::json background_meta(const background::BackgroundSession& session, double stop_wait_ms);

// meta.json's background.commit_wait: the foreground's wait for a commit (commit_at_frame).
nlohmann::json commit_wait_meta(const background::CommitWait& wait,
                                std::uint32_t commit_timeout_ms);

// The scheduling each kind of thread of this run ran under, read back from the threads (a
// verdict on non-intrusiveness is about the OS scheduler, so what it was told is part of the
// result). Called from the frame loop's thread; the stamp poller's placement is meta.json's
// "poller" (poller_placement.h).
// meta.json's "threads": the frame loop's and the workers' (read before the workers stop)...
nlohmann::json thread_scheduling_meta(const jobs::JobSystem* job_system);

// ... and the background threads', once they stopped.
void add_background_scheduling(nlohmann::json& threads,
                               const background::BackgroundSession& background);

}  // namespace gpuoverlap
