// What a scenario's [cpu] table asks for (docs/scenario-format.md, "The CPU side of a frame"):
// a job system that does a game's CPU work each frame before the scenario's GPU work is
// recorded and submitted, and the frame pacing around it. Plain data: parsed by scenarios/,
// carried out by job_system.h and the frame loop (engine/frame_loop.cpp).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/cpu_affinity.h"
#include "core/enum_names.h"

namespace gpuoverlap::jobs {

// How an idle worker waits for work (between frames, and in a frame once the queue is empty
// while the critical path still runs). spin: it keeps its core (a competitor can only run
// where the scheduler preempts it); sleep: it blocks on a futex and leaves its core to anyone;
// spin_then_sleep: spin_us of spinning first, as most engines' job systems do; yield: it polls
// for work with sched_yield between polls, runnable the whole time (the kernel decides whom a
// yield hands the core: on EEVDF it may be an idle-priority thread, until the next tick).
enum class WaitMode { spin, sleep, spin_then_sleep, yield };

inline constexpr EnumNames<WaitMode, 4> kWaitModeNames{
    {{WaitMode::spin, "spin"},
     {WaitMode::sleep, "sleep"},
     {WaitMode::spin_then_sleep, "spin_then_sleep"},
     {WaitMode::yield, "yield"}}};

std::string_view to_string(WaitMode mode);
std::optional<WaitMode> parse_wait_mode(std::string_view text);

// How the frame loop waits for its frame's jobs, an engine's style: block, on a condition the
// last job signals (its CPU goes to anyone); spin, polling the jobs' completion and keeping its
// CPU; yield, polling with sched_yield between polls (SwitchToThread on Windows), as engines
// that "give the CPU back while they wait" do. The kernel decides what a yield hands over: on
// Linux's EEVDF the yielding thread goes behind the eligible thread with the earliest
// deadline, which may be an idle-priority one, until the next tick.
enum class LoopWait { block, spin, yield };

inline constexpr EnumNames<LoopWait, 3> kLoopWaitNames{
    {{LoopWait::block, "block"}, {LoopWait::spin, "spin"}, {LoopWait::yield, "yield"}}};

inline constexpr std::uint32_t kMaxWorkers = 1024;
inline constexpr std::uint32_t kMaxJobsPerFrame = 100'000;
inline constexpr std::uint32_t kMaxFramesInFlight = 2;

struct CpuFrameSpec {
  // Worker threads. workers_from_cores: the scenario said "cores", resolved where it was parsed
  // to the CPUs the parsing thread may run on, less one. `run` reserves the poller's CPU first
  // (queues/poller_placement.h), so those exclude it and the one left is the frame loop's;
  // with the poller unpinned, the one left is shared by the poller and the frame loop, which
  // take turns.
  std::uint32_t workers = 1;
  bool workers_from_cores = false;
  // The frame's CPU work: jobs_per_frame jobs of equal size, cpu_ms_per_frame of busy work in
  // all, in milliseconds of an idle core of this machine (busy_work.h calibrates it). Written as
  // per-worker amounts (jobs_per_worker, cpu_ms_per_worker), the totals scale with the workers
  // and the per-worker values are kept to write the file back as it was.
  std::uint32_t jobs_per_frame = 60;
  double cpu_ms_per_frame = 4.0;
  std::optional<std::uint32_t> jobs_per_worker;
  std::optional<double> cpu_ms_per_worker;
  // The first critical_jobs of the frame's jobs form a chain (simulation, then visibility, then
  // command recording): each is released when the one before it ends, and taken before any
  // parallel job by the first worker free. A delayed critical job delays the frame; a delayed
  // parallel job is taken up by the others. 0: no chain.
  std::uint32_t critical_jobs = 3;
  WaitMode wait = WaitMode::spin_then_sleep;
  double spin_us = 50;  // spin_then_sleep only
  LoopWait loop_wait = LoopWait::block;
  // How the frame loop waits for the GPU to finish a frame, in the same three styles: block, in
  // the driver's wait (vkWaitSemaphores, a fence's event); spin, polling the frame's completion
  // (a zero-timeout wait) and keeping its CPU; yield, polling with sched_yield between polls.
  LoopWait gpu_wait = LoopWait::block;
  // EEVDF's custom slice for the game's threads (the frame loop and the workers), in ms, 0.1 to
  // 100 (core/thread_policy.h): none keeps the kernel's default. A scenario that asks for one
  // on a kernel that keeps none is refused where it is read.
  std::optional<double> slice_ms;
  // Pacing: a frame starts no earlier than one period after the one before (a display's
  // refresh). 0: unpaced, the next frame starts as soon as the bound below allows.
  double frame_period_ms = 0;
  // How far the CPU runs ahead of the GPU, as a swapchain bounds it: 1, the CPU phase of frame
  // N + 1 starts once frame N's GPU work completed; 2, it may start while frame N's GPU work
  // runs. The stamp protocol releases each frame's GPU work at its own t0 and polls it alone,
  // so no more than one GPU frame runs at a time and 2 is the most.
  std::uint32_t frames_in_flight = 2;
  // Pin worker i to the (i + 2)-th CPU of the process's affinity mask, leaving the first to
  // the stamp poller and the frame loop: the same placement in every run, where the
  // scheduler's placement of fresh threads otherwise changes from run to run (two workers on
  // one core's hyper-threads in one run, apart in the next). Where pinning fails, the workers
  // run unpinned and meta.json says so.
  bool pin_workers = false;
  // Where frame_period_ms was measured for the device rather than taken from the file (a CPU
  // device, whose frames take 10-100x a GPU's: scenarios/cpu_device_sizes.h), how. Recorded
  // in meta.json's "cpu"; not in the scenario files (it is what a run found, not asked for).
  // CPUs the workers keep off (they may run on the rest of the process's): those a scenario's
  // background holds (BackgroundSpec::cpus "reserved:N" or "siblings"). Set at run time, never
  // read from or written to a file; meta.json's cpu records it.
  std::vector<int> keep_off_cpus;
  struct PeriodCalibration {
    double period_ms_in_file = 0;
    double unpaced_interval_p50_ms = 0;  // the calibration run's frames, unpaced
    std::uint32_t frames = 0;            // its measured frames with an interval
    std::string from;                    // the scenario it ran: the study's baseline
  };
  std::optional<PeriodCalibration> period_calibration;

  double job_ms() const { return cpu_ms_per_frame / jobs_per_frame; }
  // The chain's length on an idle machine, and each worker's share of all the work.
  double critical_path_ms() const { return job_ms() * critical_jobs; }
  double cpu_ms_per_worker_share() const { return cpu_ms_per_frame / workers; }
};

// The CPUs and pinning (core/cpu_affinity.h), under the names this folder has always used.
using gpuoverlap::pin_current_thread;
using gpuoverlap::usable_cpu_ids;
using gpuoverlap::usable_cpus;

// "cores" resolved again for a thread that may run on `usable` CPUs (a device's share of them,
// `run --concurrent --split-cpus`): a spec whose workers came from "cores" gets `usable` less
// one, and totals the file gave per worker scale with them (at least critical_jobs jobs, at most
// kMaxJobsPerFrame). A spec with a count of workers is left as it is.
void resolve_cores(CpuFrameSpec& spec, std::uint32_t usable);

// One line for logs and `validate`, e.g. "15 workers (cores less the poller's), 60 jobs, 60 ms
// of work per frame, a chain of 3, spin_then_sleep (50 us), 8 ms period, 2 frames in flight".
std::string describe(const CpuFrameSpec& spec);
nlohmann::json to_json(const CpuFrameSpec& spec);  // meta.json

}  // namespace gpuoverlap::jobs
