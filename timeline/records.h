// The measured data of one scenario, shared by the CSV export, the summary and (later) the
// plots and viewer. Times are microseconds from the frame's gate release t0 on the CPU clock
// (CLOCK_MONOTONIC_RAW); an empty optional means "this clock is not available".
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "background/background_spec.h"
#include "core/enum_names.h"
#include "core/result.h"
#include "scenarios/preemption_spec.h"

namespace gpuoverlap {

struct Scenario;

enum class RecordStatus {
  ok,           // both stamps arrived and all clocks are consistent
  timeout,      // a stamp did not arrive before the frame's deadline
  device_lost,  // the device was lost during the frame
  gpu_error,    // another API failure during the frame (see meta.json "failure")
};

inline constexpr EnumNames<RecordStatus, 4> kRecordStatusNames{
    {{RecordStatus::ok, "ok"},
     {RecordStatus::timeout, "timeout"},
     {RecordStatus::device_lost, "device_lost"},
     {RecordStatus::gpu_error, "gpu_error"}}};

std::string_view to_string(RecordStatus status);

struct WorkloadFrameRecord {
  std::uint32_t frame = 0;   // measured frame, 0-based, warm-up frames excluded
  std::size_t workload = 0;  // index into Scenario::workloads
  std::optional<double> poll_start_us;
  std::optional<double> poll_end_us;
  // Each poll time's detection window (queues/settling_spin.h): the stamp was written within
  // this many µs before it. Its uncertainty: a stamp seen 12 µs late has a window of at least
  // 12 µs.
  std::optional<double> poll_start_window_us;
  std::optional<double> poll_end_window_us;
  // PollDisturbance bits: stamps whose window exceeded the run's tolerance
  // (mark_poll_disturbance). Still measured and written; analyses that rest on the poll clock
  // report them apart.
  std::uint32_t poll_disturbed = 0;
  std::optional<double> ts_start_us;
  std::optional<double> ts_end_us;
  // Shader clock (VK_KHR_shader_clock, device scope) read by the stamping threads, on the CPU
  // clock only once its timebase was verified for this run (see clock_agreement.h); the raw
  // ticks are kept either way for analysis (the self-test's fits).
  std::optional<double> clk_start_us;
  std::optional<double> clk_end_us;
  std::optional<std::uint64_t> clk_start_ticks;
  std::optional<std::uint64_t> clk_end_ticks;
  // The frame's timestamp calibration uncertainty (vkGetCalibratedTimestampsEXT's max
  // deviation), part of every comparison of a GPU clock with the CPU clock.
  double calibration_deviation_us = 0;
  // ClockDisagreement bits (clock_agreement.h): clocks of this row that disagree beyond the
  // run's tolerance. 0 = all available clocks agree.
  std::uint32_t disagreements = 0;
  RecordStatus status = RecordStatus::ok;
  // The frame's gate release t0, in µs after the first measured frame's t0 (same clock):
  // places frames on one time axis (trace.json).
  double frame_t0_us = 0;
  // The committed background variant the workload ran (BackgroundSpec::bind_committed): the
  // compile's number; 0: its build-time pipeline.
  std::uint64_t variant = 0;
};

enum PollDisturbance : std::uint32_t { kPollStartDisturbed = 1u << 0, kPollEndDisturbed = 1u << 1 };
// records.csv's `poll_disturbed`, one name per combination of the bits.
inline constexpr EnumNames<std::uint32_t, 4> kPollDisturbanceNames{
    {{0, ""},
     {kPollStartDisturbed, "start"},
     {kPollEndDisturbed, "end"},
     {kPollStartDisturbed | kPollEndDisturbed, "start;end"}}};
inline std::string_view poll_disturbance_names(std::uint32_t bits) {
  return name_of(kPollDisturbanceNames, bits & 3u);
}

// The three clocks a record's times may be on: the CPU poller's ("poll"), the GPU's timestamp
// queries ("ts") and the shader clock ("clk"), each converted to the CPU clock.
enum class Clock { poll, ts, clk };
inline constexpr EnumNames<Clock, 3> kClockNames{
    {{Clock::poll, "poll"}, {Clock::ts, "ts"}, {Clock::clk, "clk"}}};
inline constexpr Clock kClocks[3] = {Clock::poll, Clock::ts, Clock::clk};
std::string_view to_string(Clock clock);

// A record's start or end on one clock; nullopt when that clock has no value. `Row`: a
// measured record (WorkloadFrameRecord) or a row of records.csv (RecordRow, record_row.h),
// which name their times alike.
template <typename Row>
std::optional<double> start_on(const Row& record, Clock clock) {
  switch (clock) {
    case Clock::poll:
      return record.poll_start_us;
    case Clock::ts:
      return record.ts_start_us;
    case Clock::clk:
      return record.clk_start_us;
  }
  return std::nullopt;
}
template <typename Row>
std::optional<double> end_on(const Row& record, Clock clock) {
  switch (clock) {
    case Clock::poll:
      return record.poll_end_us;
    case Clock::ts:
      return record.ts_end_us;
    case Clock::clk:
      return record.clk_end_us;
  }
  return std::nullopt;
}
// Whether the stamps in `bits` (PollDisturbance) of a record are disturbed on `clock`: only
// the poll clock rests on the poller, so on the others nothing is.
inline bool disturbed_on(std::uint32_t poll_disturbed, Clock clock, std::uint32_t bits) {
  return clock == Clock::poll && (poll_disturbed & bits) != 0;
}

// What the CPU saw of one measured frame (frames.csv), for the non-intrusiveness verdict:
// the costs background work could inflate that are not a workload's own stamps.
struct FrameRecord {
  std::uint32_t frame = 0;  // measured frame, 0-based
  double cpu_start_us = 0;  // the frame loop's start, µs from the first measured frame's t0
  // The frame on the CPU as an application spends it: record and submit, then release the gate
  // and wait for the GPU. The tool's own work in between and after (a calibration read,
  // starting the polling thread, collecting the stamps) is left out, so the metric does not
  // include the tool's threads.
  double cpu_frame_us = 0;
  double cpu_submit_us = 0;  // recording and submitting the frame's command buffers only
  // Gate release (the moment the frame's work may start) to the first workload's start stamp.
  std::optional<double> submit_to_start_us;
  // The poller's longest interval between the starts of two passes over the stamps: the worst
  // delay this frame could add to detecting a stamp. A preempted or starved polling thread
  // shows here first. With it, the passes it made and the CPU it ended on.
  std::optional<double> poll_gap_max_us;
  std::optional<std::uint64_t> poll_scans;
  std::optional<int> poller_cpu;
  // Background compiles whose run overlapped this frame (cpu_start to its end), by kind.
  std::uint32_t bg_managed = 0;
  std::uint32_t bg_boosted = 0;
  std::uint32_t bg_unmanaged = 0;
  RecordStatus status = RecordStatus::ok;
  // The frame fell in a block where the background work was held (BackgroundSpec::
  // alternate_frames): no compile started during it.
  bool bg_held = false;
  // The frame-level endpoints (docs/background.md, "The verdict"). The frame starts at
  // cpu_start_us: its CPU phase's release with [cpu], else its recording.
  // Start to start from the frame before (what a player feels: PresentMon's
  // MsBetweenPresents); empty for the first frame of a run.
  std::optional<double> frame_interval_us;
  bool stutter = false;  // paced, and the interval above 1.5 periods
  // The GPU frame: its first workload's start to its last one's end (poll clock, else ts).
  std::optional<double> gpu_span_us;
  // The CPU phase ([cpu], jobs/job_system.h): the jobs' makespan, the critical chain's end
  // from the release, the worst worker wake-up (release to the worker seeing the frame), the
  // workers that had not seen the frame by its end, and the least and most busy worker.
  std::optional<double> cpu_phase_us;
  std::optional<double> critical_path_us;
  std::optional<double> wake_max_us;
  std::uint32_t workers_missed = 0;
  std::optional<double> worker_busy_min_us;
  std::optional<double> worker_busy_max_us;
  // The frame interval (frame_interval_us) as the frame loop's thread spent it, by phase
  // (engine/loop_phases.h: they add up to the interval). Mostly the frame before's work:
  // the interval runs from its start to this frame's.
  std::optional<double> loop_jobs_us, loop_submit_us, loop_tool_us, loop_gpu_wait_us, loop_pace_us,
      loop_woke_late_us;
  // What the scheduler did to the frame loop's thread in the interval (core/
  // thread_accounting.h): time runnable but not running (Linux), time on a CPU, the switches
  // it made (blocked, slept) and suffered (preempted), and the CPU it started this frame on.
  std::optional<double> loop_run_delay_us, loop_on_cpu_us;
  std::optional<std::int64_t> loop_switches_voluntary, loop_switches_involuntary;
  std::optional<int> loop_cpu;
  // The same interval for the job system's workers, read from outside them (Linux only): run
  // delay summed over the workers and the worst worker's, their on-CPU time summed. And the
  // stamp poller's run delay while it polled this frame.
  std::optional<double> workers_run_delay_us, workers_run_delay_max_us, workers_on_cpu_us;
  std::optional<double> poller_run_delay_us;
  // How many workers ended their last job of this frame on the CPU the frame loop started it
  // on (loop_cpu): threads that compete with the one that starts frames.
  std::optional<std::uint32_t> workers_on_loop_cpu;
  // The harness itself (queues/stamp_poller.h): the polling thread's OS id (one thread per run:
  // the same in every frame), its wake-up from arm() to its first pass, and the frame loop's
  // reschedule points for it this frame: a futex wake of the sleeping poller, a futex wait for
  // a poll not yet ended (0-2; nothing else the harness does on the frame path may reschedule
  // the frame loop). `calibrated`: this frame read a fresh CPU/GPU clock calibration (one in
  // 16 frames; the others use the latest).
  std::optional<std::int64_t> poller_thread_id;
  std::optional<double> poller_wake_us;
  std::optional<std::uint32_t> harness_reschedule_points;
  std::optional<bool> calibrated;
  // The kernel's scheduling record of the frame interval (run --sched-trace; empty without it,
  // or where it could not be taken): the frame loop's runnable time the record explains (to
  // set beside loop_run_delay_us), of it the time a background thread held its CPU, the same
  // two summed over the workers, and the frame loop's longest wait of the interval in words
  // ("compile 0-6094 (background) held its CPU 3.80 ms after it yielded, until the next tick").
  std::optional<double> sched_loop_runnable_us, sched_loop_to_background_us;
  std::optional<double> sched_workers_runnable_us, sched_workers_to_background_us;
  std::string sched_loop_longest;
};

// One off-CPU stretch of a foreground thread by the kernel's record (sched_waits.csv;
// schedtrace/thread_waits.h says what each field means). Times are µs from the time origin.
struct SchedWaitRow {
  std::string thread;  // "frame loop", "worker 3", "poller"
  std::int64_t thread_id = 0;
  std::optional<std::uint32_t> frame;  // the measured frame whose interval it ended in
  double off_us = 0, on_us = 0, runnable_us = 0;
  int cpu_out = -1, cpu_in = -1;
  std::string lost_by, holder, holder_kind;
  bool blocked = false;  // lost_by is "blocked": asleep, then runnable from its wake-up
  int holder_prio = -1;
  std::string given_back_by, waker, waker_kind;
  std::optional<double> waker_waited_us;
  bool lost_events = false;
  std::string text;  // the wait in words
};

// Who ran on one CPU from start to end, by the kernel's record (the trace's CPU lanes). Times
// are µs from the time origin; the idle task's stretches are left out.
struct SchedCpuSlice {
  int cpu = -1;
  double start_us = 0, end_us = 0;
  std::string thread;  // "compile 0-6094"
  std::string kind;    // schedtrace's ThreadKind name: "background", "frame's thread", ...
};

// A background compile (managed or unmanaged) ran during the frame: the frames that are a
// study condition's evidence.
inline bool background_overlapped(const FrameRecord& f) {
  return f.bg_managed + f.bg_unmanaged > 0;
}

struct ScenarioTimeline {
  std::vector<WorkloadFrameRecord> records;  // frame-major, workload-minor
  std::vector<FrameRecord> frames;           // one per measured frame
  // Background compiles of the run (background.csv), times on CLOCK_MONOTONIC_RAW; empty
  // without [background].
  std::vector<background::BackgroundTaskRecord> background_tasks;
  // The foreground's wait for a commit ([background] commit_at_frame); none without one, or
  // when the run failed before it.
  std::optional<background::CommitWait> commit_wait;
  // The first measured frame's t0 on CLOCK_MONOTONIC_RAW: the origin of frame_t0_us and of
  // the background times in background.csv. 0 when no frame was measured.
  std::int64_t time_origin_ns = 0;
  nlohmann::json meta = nlohmann::json::object();  // device, queues, clocks (executor's part)
  // A preemption scenario's calibration and run facts (records and frames then hold one
  // entry per submission, see preemption/preemption_analysis.h).
  std::optional<preemption::PreemptionRunInfo> preemption;
  // Set when the scenario stopped early (GPU timeout, device loss). The records up to that
  // point are still valid and are written out.
  std::optional<Error> failure;
  // The kernel's scheduling record was taken (run --sched-trace): sched_waits.csv is written,
  // with every off-CPU stretch of the frame loop, the workers and the poller in the measured
  // frames.
  bool sched_recorded = false;
  std::vector<SchedWaitRow> sched_waits;
  std::vector<SchedCpuSlice> sched_cpu_slices;  // the measured frames' span, every CPU
  // The record itself, in tracefs's text form, gzip-compressed: written as sched_record.txt.gz
  // (the Perfetto UI opens it as a systrace, with a lane per CPU and every thread's states).
  std::string sched_record_gz;
};

// Fills FrameRecord::bg_* from background_tasks: a compile counts for a frame when its run
// (start to finish) overlaps the frame's CPU interval.
void annotate_background_activity(ScenarioTimeline& timeline);

}  // namespace gpuoverlap
