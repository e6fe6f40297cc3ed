// The contract between the scenario runner and a backend (Vulkan today, D3D12 later).
// API neutral: the runner and its tests build without any GPU API.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/enum_names.h"
#include "core/result.h"
#include "queues/poller_placement.h"
#include "scenarios/scenario.h"
#include "timeline/records.h"

namespace gpuoverlap {

struct Scenario;
namespace preemption {
class ParentLink;
}

// Where the stamps live. uncached: HOST_VISIBLE|HOST_COHERENT outside device memory, not
// HOST_CACHED (like the D3D12 backend's CUSTOM heap, L0 + WRITE_COMBINE). cached:
// HOST_VISIBLE|HOST_COHERENT|HOST_CACHED, where the CPU spins on its own cache line and the
// GPU's write invalidates it (PCIe snooping); the self-test measures which detects sooner.
enum class StampMemory { uncached, cached };
inline std::string_view to_string(StampMemory memory) {
  return memory == StampMemory::cached ? "cached" : "uncached";
}

// The default of --timeout-ms, for every command that runs work, and its upper bound.
inline constexpr std::uint32_t kDefaultFrameTimeoutMs = 10'000;
inline constexpr std::uint32_t kMaxFrameTimeoutMs = 3'600'000;
// The default of --washout-ms (RunSettings::washout_ms), and its upper bound.
inline constexpr std::uint32_t kDefaultWashoutMs = 500;
inline constexpr std::uint32_t kMaxWashoutMs = 60'000;

struct RunSettings {
  std::uint32_t frames = kDefaultFrames;                    // measured frames (after warm-up)
  std::uint32_t warmup_frames = kDefaultWarmupFrames;       // dropped frames at the start
  std::uint32_t frame_timeout_ms = kDefaultFrameTimeoutMs;  // gate release to frame completion
  bool priority_fallback = false;  // run at a lower priority when the driver refuses one
  // Timestamp queries around each workload. An end-of-workload timestamp means "all earlier
  // commands on the queue completed", which a driver may implement by draining the queue:
  // measured on H100, it serialises dispatches that would otherwise overlap. Turn off to
  // measure same-queue overlap with the poll clock alone.
  bool timestamp_queries = true;
  // The stamp protocol itself (counters, stamps, shader clock). Off only to measure its
  // overhead: the poll and shader clocks then stay empty, and a frame ends when its queues
  // signal completion.
  bool stamping = true;
  StampMemory stamp_memory = StampMemory::uncached;
  // Read VK_KHR_shader_clock (device scope) with the stamps where the device offers it.
  bool shader_clock = true;
  // A study's conditions and rounds run on one device (engine/device_executor.h); false (the
  // default): every scenario opens its own.
  bool study_shares_device = false;
  // A frame scenario outside a study may run on an idle API device an earlier one created with
  // the same queues, priorities and features (DeviceReuse); false (--device-per-scenario):
  // every scenario creates its own. A study's scenarios and preemption scenarios always create
  // their own (engine/device_executor.cpp says why).
  bool reuse_devices = true;
  // On a shared device, each run after the first is preceded by the foreground alone (no
  // background work, unmeasured) for at least this long: a condition's load can leave the GPU
  // clocked low into the next run (measured on the H100: 2.3x longer frames for up to 0.3 s
  // after the commit-high-priority condition). 0: none.
  std::uint32_t washout_ms = kDefaultWashoutMs;
  // A frame scenario's measured frames end once this long has passed since its first measured
  // frame began, whichever comes first: `frames` or the time (no failure; meta.json's
  // "ended_early" says after how many). A study's round gives each condition the same time
  // (StudySpec::round_ms): a condition that slows the frames measures fewer of them instead of
  // taking longer. 0: no limit.
  std::uint32_t measure_limit_ms = 0;
  // Where the stamp pollers run (queues/poller_placement.h), checked where the run began.
  PollerPlacement poller;
  // A fault injected on purpose (run --inject-frame-delay-us): a game frame's loop starts each
  // frame this much later than its pace (its period, or the frame before's start when
  // unpaced), asleep, as a frame loop slowed by something outside the tool's view would; the
  // GPU work and the CPU phase keep their own durations. A scenario without [cpu] ignores it;
  // a game frame's meta.json records it (cpu.injected_frame_delay_us) when not 0.
  std::uint32_t injected_frame_delay_us = 0;
  // The kernel's scheduling record of each frame scenario (run --sched-trace;
  // engine/sched_attribution.h): taken from tracefs around the frames where it can be, every
  // wait of the frame loop, the workers and the poller explained in sched_waits.csv and
  // frames.csv; where it cannot, the run goes on and meta.json's sched_trace says why.
  bool sched_trace = false;
  // Polled between frames; true stops the scenario after the current frame, keeping what
  // was measured (ScenarioTimeline::failure says "interrupted").
  std::function<bool()> should_stop;
  // Polled between measured frames of a frame scenario once at least one was measured; true
  // ends the scenario there as if its frames were done (no failure; meta.json's "ended_early"
  // says after how many): a `run --live` edit takes effect at the next frame boundary, in the
  // next version of the scenario (scenarios/scenario_edit.h). Empty: never.
  std::function<bool()> end_requested;
  // Called after each measured frame of a frame scenario, from the thread running it, with the
  // frame's records (one per workload) as they will be written: the narrow interface through
  // which `run --live` watches a run. It delays the next frame by as long as it takes, so it
  // must only hand the data on. Empty: not called. Not called for preemption scenarios.
  std::function<void(const Scenario& scenario, const FrameRecord& frame,
                     std::span<const WorkloadFrameRecord> records)>
      on_frame;
  // Called once a frame scenario's device is open, before its first frame, from the thread
  // running it, with what meta.json will say of the device (engine/device_facts.h: the queues
  // as mapped with the priorities granted, the clocks): how `run --live` shows them while the
  // run goes on. Empty: not called.
  std::function<void(const Scenario& scenario, const nlohmann::json& device_facts)> on_start;
};

// RunSettings as JSON (all but should_stop and on_frame), how a run's settings reach the load
// process of
// --load-process: one struct from the command line to the backend, in either process.
nlohmann::json to_json(const RunSettings& settings);
// Every key required and range-checked (the load process's command line is input too).
Result<RunSettings> run_settings_from_json(const nlohmann::json& json);

// Called from the thread that called run(): after every warm-up frame and after the last frame,
// never between measured frames (a progress line written to a terminal there could block the
// frame loop in the middle of what it measures). A preemption run calls it every 100 ms.
using ProgressCallback = std::function<void(std::uint32_t frames_done, std::uint32_t frames_total)>;

// How a self-test round trip reaches the GPU: `flag`, a host write that a spinning GPU thread
// sees (what Vulkan does not promise while the shader runs); `semaphore`, vkSignalSemaphore
// on a timeline semaphore that a waiting submission's command answers (what drivers do
// promise, and how a frame's gate is released).
enum class RoundTripPath { flag, semaphore };
inline constexpr EnumNames<RoundTripPath, 2> kRoundTripPathNames{
    {{RoundTripPath::flag, "flag"}, {RoundTripPath::semaphore, "semaphore"}}};

// Host-GPU round trips (the self-test): the CPU posts round r, the GPU answers r into
// host-visible memory, the CPU sees the answer.
struct PingPongResult {
  std::vector<double> round_trip_us;  // per completed round, CPU write to CPU seeing the answer
  std::string memory;                 // the memory type's flags
  std::optional<Error> failure;       // set when rounds stopped early (deadline, device loss)
  // The GPU never saw a post made while it ran: Vulkan makes host writes visible to the
  // device at submission only, and a driver may keep it that way (an H100 did).
  bool host_writes_invisible = false;
  // The GPU answered a round before the CPU posted it: the probe's protocol does not hold on
  // this device (lavapipe under CPU load), so no round trip can be measured.
  bool unordered_answers = false;
};

class ScenarioExecutor {
 public:
  virtual ~ScenarioExecutor() = default;

  // Runs one validated scenario. An Error means nothing was measured (setup failed, e.g. a
  // refused priority); a GPU timeout or device loss during the frames is *not* an Error: it
  // comes back as ScenarioTimeline::failure with the records measured up to that point.
  virtual Result<ScenarioTimeline> run(const Scenario& scenario, const RunSettings& settings,
                                       const ProgressCallback& progress) = 0;

  // `rounds` round trips on `path` (the flag's in one dispatch); every wait ends by
  // `timeout_ms`. Backends without it return an Error.
  virtual Result<PingPongResult> ping_pong(std::uint32_t rounds, StampMemory memory,
                                           RoundTripPath path, std::uint32_t timeout_ms) {
    (void)rounds, (void)memory, (void)path, (void)timeout_ms;
    return make_error("this backend has no ping-pong probe");
  }

  // `gpuoverlap load-process`: runs the load part of a preemption scenario (made with
  // Role::load_only) until the parent says stop, reporting through `parent`
  // (preemption/load_process.h). The timeline's records are the load's.
  virtual Result<ScenarioTimeline> run_load_process(const Scenario& load_only,
                                                    const RunSettings& settings,
                                                    preemption::ParentLink& parent) {
    (void)load_only, (void)settings, (void)parent;
    return make_error("this backend cannot run a load process");
  }

  // True once a device had to be abandoned with work possibly still running on it (a frame
  // past its deadline). Then neither it nor the API may be torn down: the driver's threads
  // may still be executing. The process should report and end with std::_Exit.
  virtual bool abandoned_device() const { return false; }
};

}  // namespace gpuoverlap
