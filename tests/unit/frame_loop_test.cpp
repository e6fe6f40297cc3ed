// The frame loop (engine/frame_loop.h) on a fake backend whose "GPU" is scripted per frame:
// stamps written at the gate's release (or late, or never), waits that complete, time out or
// lose the device, a submission that fails. No GPU, no timing asserted: only which records,
// statuses, failures and calls the loop makes.
#include "engine/frame_loop.h"

#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "core/clock.h"
#include "engine/loop_phases.h"
#include "fake_backend.h"

namespace gpuoverlap {
namespace {

using fakes::FakeBackend;
using fakes::FakeFrame;

Scenario two_workloads() {
  Scenario s;
  s.name = "fake";
  s.workloads.resize(2);
  return s;
}

RunSettings settings(std::uint32_t warmup, std::uint32_t frames) {
  RunSettings r;
  r.warmup_frames = warmup;
  r.frames = frames;
  // Generous: the fake answers at once, and a loaded machine must not turn a good frame late.
  r.frame_timeout_ms = 60'000;
  return r;
}

// A game frame ([cpu]): the jobs run before the frame is recorded, frames are paced, and the
// CPU runs at most frames_in_flight - 1 frames ahead of the GPU. Orders only: a frame never
// starts before its pace, and never before the GPU finished the frame frames_in_flight before.
Scenario game_frame(std::uint32_t frames_in_flight) {
  Scenario s = two_workloads();
  jobs::CpuFrameSpec cpu;
  cpu.workers = 2;
  cpu.jobs_per_frame = 8;
  cpu.cpu_ms_per_frame = 0.2;
  cpu.critical_jobs = 2;
  cpu.frame_period_ms = 2;
  cpu.frames_in_flight = frames_in_flight;
  s.cpu = cpu;
  return s;
}

// The measured frames' starts on CLOCK_MONOTONIC_RAW.
std::vector<std::int64_t> frame_starts_ns(const ScenarioTimeline& t) {
  std::vector<std::int64_t> out;
  for (const FrameRecord& f : t.frames)
    out.push_back(t.time_origin_ns + static_cast<std::int64_t>(std::llround(f.cpu_start_us * 1e3)));
  return out;
}

// The frame loop's thread in the frame's interval: the six phases add up to it exactly (one
// clock, contiguous spans), and the scheduler's account of the thread is there.
void expect_interval_explained(const FrameRecord& f) {
  ASSERT_TRUE(f.frame_interval_us);
  ASSERT_TRUE(f.loop_jobs_us && f.loop_submit_us && f.loop_tool_us && f.loop_gpu_wait_us &&
              f.loop_pace_us && f.loop_woke_late_us);
  const double sum_us = *f.loop_jobs_us + *f.loop_submit_us + *f.loop_tool_us +
                        *f.loop_gpu_wait_us + *f.loop_pace_us + *f.loop_woke_late_us;
  EXPECT_NEAR(sum_us, *f.frame_interval_us, 0.001);
  EXPECT_TRUE(f.loop_run_delay_us && f.loop_on_cpu_us && f.loop_switches_voluntary &&
              f.loop_switches_involuntary && f.loop_cpu);
}

TEST(LoopPhases, AnIntervalsPhasesAddUpToItAndAPastPaceTargetTakesNoTime) {
  LoopPhaseClock clock;
  EXPECT_FALSE(clock.frame_started(1000, LoopPhase::jobs)) << "no interval before the first";
  clock.enter(LoopPhase::submit, 1500);
  clock.enter(LoopPhase::tool, 1700);
  clock.enter(LoopPhase::gpu_wait, 1800);
  clock.enter(LoopPhase::tool, 2600);
  clock.enter(LoopPhase::pace, 2700);
  clock.enter(LoopPhase::woke_late, 3000);  // the pace's target
  const auto first = clock.frame_started(3400, LoopPhase::jobs);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->at(LoopPhase::jobs), 500);
  EXPECT_EQ(first->at(LoopPhase::submit), 200);
  EXPECT_EQ(first->at(LoopPhase::tool), 200);
  EXPECT_EQ(first->at(LoopPhase::gpu_wait), 800);
  EXPECT_EQ(first->at(LoopPhase::pace), 300);
  EXPECT_EQ(first->at(LoopPhase::woke_late), 400);
  EXPECT_EQ(first->total_ns(), 3400 - 1000);
  // The pace asked for a target already past: no pace, and the interval still adds up.
  clock.enter(LoopPhase::pace, 3600);
  clock.enter(LoopPhase::woke_late, 3500);
  const auto second = clock.frame_started(3700, LoopPhase::gpu_wait);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->at(LoopPhase::jobs), 200);
  EXPECT_EQ(second->at(LoopPhase::pace), 0);
  EXPECT_EQ(second->at(LoopPhase::woke_late), 100);
  EXPECT_EQ(second->total_ns(), 3700 - 3400);
  // The phase a start hands on is where the next interval begins.
  const auto third = clock.frame_started(3900, LoopPhase::jobs);
  ASSERT_TRUE(third);
  EXPECT_EQ(third->at(LoopPhase::gpu_wait), 200);
  EXPECT_EQ(third->total_ns(), 200);
}

TEST(FrameLoop, AGameFrameRunsItsJobsFirstPacedAndOneFrameInFlight) {
  FakeBackend backend(2);
  const FrameLoopOutcome out = run_frames(backend, game_frame(1), settings(2, 6), {});
  ASSERT_FALSE(out.timeline.failure) << out.timeline.failure->message;
  ASSERT_EQ(out.timeline.frames.size(), 6u);
  for (const FrameRecord& f : out.timeline.frames) {
    EXPECT_EQ(f.status, RecordStatus::ok);
    ASSERT_TRUE(f.cpu_phase_us && f.critical_path_us && f.wake_max_us);
    EXPECT_LE(*f.critical_path_us, *f.cpu_phase_us);
    ASSERT_TRUE(f.frame_interval_us) << "the warm-up frame before it started too";
    EXPECT_GE(*f.frame_interval_us, 2000.0) << "a paced frame never starts early";
    EXPECT_TRUE(f.gpu_span_us);
    ASSERT_TRUE(f.worker_busy_min_us && f.worker_busy_max_us);
    EXPECT_LE(*f.worker_busy_min_us, *f.worker_busy_max_us);
    expect_interval_explained(f);
  }
  // One frame in flight: each frame's CPU phase begins after the GPU finished the one before
  // (measured frame i is frame 3 + i: two warm-up frames come first).
  const std::vector<std::int64_t> starts = frame_starts_ns(out.timeline);
  for (std::uint32_t i = 1; i < starts.size(); ++i)
    EXPECT_GE(starts[i] + 1, backend.completed_ns.at(2 + i)) << "frame " << i;
  const nlohmann::json& cpu = out.timeline.meta["cpu"];
  EXPECT_EQ(cpu["workers"], 2);
  EXPECT_EQ(cpu["frames_in_flight"], 1);
  EXPECT_GT(cpu["busy_work_calibration"]["iterations_per_us"].get<double>(), 0);
  EXPECT_GT(cpu["job_iterations"].get<std::uint64_t>(), 0u);
}

TEST(FrameLoop, TwoFramesInFlightBeginTheNextCpuPhaseWhileTheGpuRunsButNeverTwoAhead) {
  FakeBackend backend(2);
  // Every frame's GPU work but the last's outlasts the next frame's start: the first wait
  // (until that start) times out, the next one completes. (The fake's timeout comes at once;
  // the last frame has no next frame, so its wait runs to the frame's deadline.)
  for (std::uint32_t frame = 1; frame <= 7; ++frame)
    backend.script[frame] =
        FakeFrame{.first_wait = GpuStatus::timeout, .grace_wait = GpuStatus::ok};
  const FrameLoopOutcome out = run_frames(backend, game_frame(2), settings(2, 6), {});
  ASSERT_FALSE(out.timeline.failure) << out.timeline.failure->message;
  ASSERT_EQ(out.timeline.frames.size(), 6u);
  const std::vector<std::int64_t> starts = frame_starts_ns(out.timeline);
  bool overlapped = false;
  for (std::uint32_t i = 1; i < starts.size(); ++i) {
    const FrameRecord& f = out.timeline.frames[i];
    EXPECT_EQ(f.status, RecordStatus::ok);
    EXPECT_GE(*f.frame_interval_us, 2000.0) << "paced, also when begun during a GPU wait";
    expect_interval_explained(f);
    // Began before the frame before it was complete, and never before the one before that.
    overlapped = overlapped || starts[i] < backend.completed_ns.at(2 + i);
    EXPECT_GE(starts[i] + 1, backend.completed_ns.at(1 + i)) << "frame " << i;
  }
  EXPECT_TRUE(overlapped) << "with two in flight, a CPU phase runs beside the GPU's frame";
}

// [cpu] gpu_wait spin and yield: the frame loop asks for the frame's completion (waits whose
// deadline has passed) until the GPU is done, and never waits in the driver; block waits once.
TEST(FrameLoop, APollingGpuWaitAsksUntilTheFrameIsDoneAndABlockingOneWaitsOnce) {
  for (const jobs::LoopWait style :
       {jobs::LoopWait::spin, jobs::LoopWait::yield, jobs::LoopWait::block}) {
    SCOPED_TRACE(static_cast<int>(style));
    FakeBackend backend(2);
    const bool polls = style != jobs::LoopWait::block;
    if (polls) backend.script[3] = FakeFrame{.done_at_wait = 40};
    Scenario scenario = game_frame(1);
    scenario.cpu->gpu_wait = style;
    const FrameLoopOutcome out = run_frames(backend, scenario, settings(1, 4), {});
    ASSERT_FALSE(out.timeline.failure) << out.timeline.failure->message;
    ASSERT_EQ(out.timeline.frames.size(), 4u);
    for (const FrameRecord& f : out.timeline.frames) EXPECT_EQ(f.status, RecordStatus::ok);
    if (polls) {
      EXPECT_EQ(backend.waits_of_frame.at(3), 40) << "asked until done, not once more";
      EXPECT_EQ(backend.polls_of_frame.at(3), 40) << "every ask a poll";
      EXPECT_TRUE(backend.completed_ns.count(3));
    } else {
      for (std::uint32_t frame = 1; frame <= 5; ++frame) {
        EXPECT_EQ(backend.waits_of_frame.at(frame), 1) << frame;
        EXPECT_EQ(backend.polls_of_frame.count(frame), 0u) << "a wait until the deadline";
      }
    }
  }
}

TEST(FrameLoop, ADeviceLostWhileThePollingGpuWaitAsksStopsAtThatFrame) {
  FakeBackend backend(2);
  backend.script[3] = FakeFrame{.done_at_wait = 7, .done_status = GpuStatus::device_lost};
  Scenario scenario = game_frame(1);
  scenario.cpu->gpu_wait = jobs::LoopWait::spin;
  const FrameLoopOutcome out = run_frames(backend, scenario, settings(0, 5), {});
  ASSERT_TRUE(out.timeline.failure);
  EXPECT_EQ(out.timeline.failure->message, "waiting for frame 2 failed: FAKE_DEVICE_LOST");
  EXPECT_EQ(backend.waits_of_frame.at(3), 7) << "no ask after the loss";
  EXPECT_EQ(backend.recorded.size(), 3u);
  ASSERT_EQ(out.timeline.frames.size(), 3u);
  EXPECT_EQ(out.timeline.frames.back().status, RecordStatus::device_lost);
}

// A GPU that never finishes: the polls end at the frame's deadline, as the blocking wait would.
TEST(FrameLoop, APollingGpuWaitEndsAtTheFramesDeadline) {
  FakeBackend backend(2);
  backend.script[2] = FakeFrame{.stamps_at_release = false,
                                .done_at_wait = std::numeric_limits<int>::max(),
                                .done_status = GpuStatus::timeout};
  Scenario scenario = game_frame(1);
  scenario.cpu->gpu_wait = jobs::LoopWait::yield;
  RunSettings s = settings(0, 3);
  s.frame_timeout_ms = 50;
  const std::int64_t start_ns = monotonic_raw_ns();
  const FrameLoopOutcome out = run_frames(backend, scenario, s, {});
  ASSERT_TRUE(out.timeline.failure);
  EXPECT_NE(out.timeline.failure->message.find("frame 1: the GPU had not finished it"),
            std::string::npos)
      << out.timeline.failure->message;
  EXPECT_TRUE(out.gpu_may_be_busy);
  EXPECT_GE(monotonic_raw_ns() - start_ns, 50'000'000) << "polled until the deadline";
  EXPECT_GT(backend.polls_of_frame.at(2), 1);
}

// Two frames in flight with a spinning GPU wait: the next frame's CPU phase begins when the
// poll reaches its start, and the CPU is never two frames ahead.
TEST(FrameLoop, TwoFramesInFlightWithASpinningGpuWaitNeverRunTwoAhead) {
  FakeBackend backend(2);
  for (std::uint32_t frame = 1; frame <= 7; ++frame)
    backend.script[frame] = FakeFrame{.done_at_wait = 300};
  Scenario scenario = game_frame(2);
  scenario.cpu->gpu_wait = jobs::LoopWait::spin;
  const FrameLoopOutcome out = run_frames(backend, scenario, settings(2, 6), {});
  ASSERT_FALSE(out.timeline.failure) << out.timeline.failure->message;
  ASSERT_EQ(out.timeline.frames.size(), 6u);
  const std::vector<std::int64_t> starts = frame_starts_ns(out.timeline);
  for (std::uint32_t i = 1; i < starts.size(); ++i) {
    EXPECT_EQ(out.timeline.frames[i].status, RecordStatus::ok);
    EXPECT_GE(starts[i] + 1, backend.completed_ns.at(1 + i)) << "frame " << i;
  }
}

TEST(FrameLoop, AFailureInAGameFrameJoinsTheWorkersAndKeepsTheFramesBefore) {
  FakeBackend backend(2);
  backend.script[5] = FakeFrame{.first_wait = GpuStatus::device_lost};
  const FrameLoopOutcome out = run_frames(backend, game_frame(2), settings(2, 6), {});
  ASSERT_TRUE(out.timeline.failure);
  EXPECT_EQ(out.timeline.frames.size(), 3u) << "frames 3 and 4 measured, 5 marked";
  EXPECT_EQ(out.timeline.frames.back().status, RecordStatus::device_lost);
  EXPECT_TRUE(out.timeline.meta.contains("cpu"));
}

TEST(FrameLoop, MeasuresEveryFrameAfterTheWarmUpWithAllThreeClocksPresent) {
  FakeBackend backend(2);
  std::vector<std::pair<std::uint32_t, std::uint32_t>> progress;
  FrameLoopOutcome out = run_frames(backend, two_workloads(), settings(2, 5),
                                    [&](std::uint32_t done, std::uint32_t total) {
                                      progress.push_back({done, total});
                                    });

  EXPECT_FALSE(out.timeline.failure) << out.timeline.failure->message;
  EXPECT_FALSE(out.gpu_may_be_busy);
  EXPECT_EQ(backend.recorded, (std::vector<std::uint32_t>{1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(backend.released, backend.recorded);
  // Progress for the warm-up frames and the last one, never between measured frames.
  EXPECT_EQ(progress,
            (std::vector<std::pair<std::uint32_t, std::uint32_t>>{{1, 7}, {2, 7}, {7, 7}}));
  ASSERT_EQ(out.timeline.frames.size(), 5u);
  ASSERT_EQ(out.timeline.records.size(), 10u);
  for (std::size_t i = 0; i < out.timeline.records.size(); ++i) {
    const WorkloadFrameRecord& r = out.timeline.records[i];
    EXPECT_EQ(r.frame, i / 2);
    EXPECT_EQ(r.workload, i % 2);
    EXPECT_EQ(r.status, RecordStatus::ok);
    EXPECT_TRUE(r.poll_start_us && r.poll_end_us);
    EXPECT_TRUE(r.ts_start_us && r.ts_end_us);
    EXPECT_LT(*r.ts_start_us, *r.ts_end_us);  // 10 µs apart by construction, not measured
    EXPECT_FALSE(r.clk_start_us);             // no shader clock on this backend
  }
  // The backend's facts, written by the engine.
  EXPECT_EQ(out.timeline.meta["queues"][0]["timestamp_valid_bits"], 64);
  EXPECT_EQ(out.timeline.meta["clocks"]["timestamp"]["period_ns"], 1.0);
  EXPECT_EQ(out.timeline.meta["clocks"]["shader_clock"]["recorded"], false);
  EXPECT_EQ(out.timeline.meta["clocks"]["timestamp"]["max_calibration_deviation_ns"], 500.0);
  // The first and the last measured frame calibrate; the three between use the first's.
  EXPECT_EQ(out.timeline.meta["clocks"]["timestamp"]["drift"]["calibrations"], 2);
  EXPECT_EQ(backend.calibrations, 3u) << "the first warm-up frame, the first and last measured";
}

TEST(FrameLoop, WithoutStampingAFrameEndsAtItsFencesAndHasNoPollClock) {
  FakeBackend backend(2);
  RunSettings s = settings(0, 3);
  s.stamping = false;
  backend.script[2] = FakeFrame{.stamps_at_release = false};
  FrameLoopOutcome out = run_frames(backend, two_workloads(), s, {});
  EXPECT_FALSE(out.timeline.failure);
  ASSERT_EQ(out.timeline.records.size(), 6u);
  for (const WorkloadFrameRecord& r : out.timeline.records) {
    EXPECT_EQ(r.status, RecordStatus::ok);
    EXPECT_FALSE(r.poll_start_us || r.poll_end_us);
  }
}

TEST(FrameLoop, AStampThatNeverArrivesAfterTheGpuFinishedIsReportedLost) {
  FakeBackend backend(2);
  backend.script[3] = FakeFrame{.never_end = {1}};
  FrameLoopOutcome out = run_frames(backend, two_workloads(), settings(1, 5), {});
  ASSERT_TRUE(out.timeline.failure);
  EXPECT_NE(out.timeline.failure->message.find("frame 1: the GPU finished, but 1 of 2 workloads' "
                                               "stamps never reached the CPU"),
            std::string::npos)
      << out.timeline.failure->message;
  EXPECT_EQ(out.timeline.failure->api_code_name, "FAKE_TIMEOUT");  // the backend's own code
  EXPECT_FALSE(out.gpu_may_be_busy);           // the GPU said the frame completed
  ASSERT_EQ(out.timeline.records.size(), 4u);  // frames 0 and 1; nothing after
  EXPECT_EQ(out.timeline.records[2].status, RecordStatus::ok);
  EXPECT_EQ(out.timeline.records[3].status, RecordStatus::timeout);
  EXPECT_FALSE(out.timeline.records[3].poll_end_us);
  EXPECT_EQ(out.timeline.frames.back().status, RecordStatus::timeout);
  EXPECT_EQ(backend.recorded.size(), 3u);
}

TEST(FrameLoop, AFrameThatFinishesInTheGracePeriodIsLateNotLost) {
  FakeBackend backend(2);
  backend.script[1] = FakeFrame{.stamps_at_release = false,
                                .first_wait = GpuStatus::timeout,
                                .grace_wait = GpuStatus::ok,
                                .stamps_during_grace = true};
  FrameLoopOutcome out = run_frames(backend, two_workloads(), settings(0, 3), {});
  ASSERT_TRUE(out.timeline.failure);
  EXPECT_NE(out.timeline.failure->message.find("frame 0 missed its deadline: the GPU finished it"),
            std::string::npos)
      << out.timeline.failure->message;
  EXPECT_NE(out.timeline.failure->message.find("every stamp arrived, after the deadline"),
            std::string::npos);
  EXPECT_FALSE(out.gpu_may_be_busy);  // it finished within the grace period
  // The rows stay as they were at the deadline.
  ASSERT_EQ(out.timeline.records.size(), 2u);
  for (const WorkloadFrameRecord& r : out.timeline.records)
    EXPECT_EQ(r.status, RecordStatus::timeout);
  EXPECT_EQ(backend.waits, 2);
}

TEST(FrameLoop, AStuckFrameLeavesTheGpuBusyAndSaysNoStampMoved) {
  FakeBackend backend(2);
  backend.script[4] = FakeFrame{.stamps_at_release = false,
                                .first_wait = GpuStatus::timeout,
                                .grace_wait = GpuStatus::timeout};
  FrameLoopOutcome out = run_frames(backend, two_workloads(), settings(2, 5), {});
  ASSERT_TRUE(out.timeline.failure);
  EXPECT_NE(out.timeline.failure->message.find("frame 1: the GPU had not finished it"),
            std::string::npos)
      << out.timeline.failure->message;
  EXPECT_NE(out.timeline.failure->message.find("no stamp moved"), std::string::npos);
  EXPECT_TRUE(out.gpu_may_be_busy);
  ASSERT_EQ(out.timeline.frames.size(), 2u);
  EXPECT_EQ(out.timeline.frames[1].status, RecordStatus::timeout);
}

TEST(FrameLoop, ADeviceLostWhileWaitingMarksTheFrameAndStops) {
  FakeBackend backend(2);
  backend.script[2] = FakeFrame{.first_wait = GpuStatus::device_lost};
  FrameLoopOutcome out = run_frames(backend, two_workloads(), settings(0, 4), {});
  ASSERT_TRUE(out.timeline.failure);
  EXPECT_EQ(out.timeline.failure->message, "waiting for frame 1 failed: FAKE_DEVICE_LOST");
  EXPECT_EQ(out.timeline.failure->api_code, -4);
  EXPECT_TRUE(out.gpu_may_be_busy);
  ASSERT_EQ(out.timeline.records.size(), 4u);
  EXPECT_EQ(out.timeline.records[3].status, RecordStatus::device_lost);
  EXPECT_EQ(out.timeline.frames[1].status, RecordStatus::device_lost);
  EXPECT_EQ(backend.recorded.size(), 2u);
}

TEST(FrameLoop, AFailedSubmissionKeepsTheFramesBeforeItAndNamesTheFrame) {
  FakeBackend backend(2);
  backend.script[3] = FakeFrame{.submit = GpuStatus::device_lost};
  FrameLoopOutcome out = run_frames(backend, two_workloads(), settings(1, 4), {});
  ASSERT_TRUE(out.timeline.failure);
  EXPECT_EQ(out.timeline.failure->message,
            "frame 1: submitting the frame failed: FAKE_DEVICE_LOST");
  EXPECT_TRUE(out.gpu_may_be_busy);
  ASSERT_EQ(out.timeline.records.size(), 4u);  // frame 0 measured, frame 1 marked lost
  EXPECT_EQ(out.timeline.records[1].status, RecordStatus::ok);
  EXPECT_EQ(out.timeline.records[2].status, RecordStatus::device_lost);
  EXPECT_EQ(backend.released.size(), 2u);  // the failed frame was never released
}

TEST(FrameLoop, AWarmUpFrameThatFailsLeavesNoRecords) {
  FakeBackend backend(2);
  backend.script[1] = FakeFrame{.submit = GpuStatus::failed};
  FrameLoopOutcome out = run_frames(backend, two_workloads(), settings(3, 4), {});
  ASSERT_TRUE(out.timeline.failure);
  EXPECT_EQ(out.timeline.failure->message,
            "warm-up frame 1 of 3: submitting the frame failed: FAKE_ERROR");
  EXPECT_TRUE(out.timeline.records.empty());
  EXPECT_TRUE(out.timeline.frames.empty());
}

TEST(FrameLoop, AStopRequestEndsTheRunAtAFrameBoundaryKeepingWhatWasMeasured) {
  FakeBackend backend(2);
  RunSettings s = settings(1, 10);
  // Asked before every frame: true before the fifth.
  int asked = 0;
  s.should_stop = [&] { return ++asked == 5; };
  FrameLoopOutcome out = run_frames(backend, two_workloads(), s, {});
  ASSERT_TRUE(out.timeline.failure);
  EXPECT_EQ(out.timeline.failure->message, "interrupted after 4 of 11 frames");
  EXPECT_FALSE(out.gpu_may_be_busy);
  EXPECT_EQ(out.timeline.frames.size(), 3u);
  for (const WorkloadFrameRecord& r : out.timeline.records) EXPECT_EQ(r.status, RecordStatus::ok);
}

TEST(FrameLoop, AnEndRequestEndsTheScenarioAfterAMeasuredFrameAsComplete) {
  FakeBackend backend(2);
  RunSettings s = settings(3, 10);
  // Asked from the first frame on: the warm-up still runs, and one frame is measured.
  int asked = 0;
  s.end_requested = [&] {
    ++asked;
    return true;
  };
  FrameLoopOutcome out = run_frames(backend, two_workloads(), s, {});
  EXPECT_FALSE(out.timeline.failure) << out.timeline.failure->message;
  EXPECT_EQ(out.timeline.frames.size(), 1u);
  EXPECT_EQ(backend.recorded.size(), 4u);  // 3 warm-up frames and 1 measured
  EXPECT_EQ(asked, 1);                     // only once a frame was measured
  EXPECT_EQ(out.timeline.meta["ended_early"]["measured_frames"], 1);
  EXPECT_EQ(out.timeline.meta["ended_early"]["of"], 10);

  // Never asked to end: every frame, and no "ended_early".
  FakeBackend again(2);
  s.end_requested = [] { return false; };
  FrameLoopOutcome all = run_frames(again, two_workloads(), s, {});
  EXPECT_EQ(all.timeline.frames.size(), 10u);
  EXPECT_FALSE(all.timeline.meta.contains("ended_early"));
}

// A study's round_ms: the measured frames end at the time limit as if done, counted from the
// first measured frame (the warm-up runs whole), and meta.json says why.
TEST(FrameLoop, ATimeLimitEndsTheMeasuredFramesAsComplete) {
  FakeBackend backend(2);
  RunSettings s = settings(3, 100'000);  // far more frames than 1 ms holds
  s.measure_limit_ms = 1;
  FrameLoopOutcome out = run_frames(backend, two_workloads(), s, {});
  EXPECT_FALSE(out.timeline.failure) << out.timeline.failure->message;
  ASSERT_TRUE(out.timeline.meta.contains("ended_early"));
  const std::size_t measured = out.timeline.frames.size();
  EXPECT_GE(measured, 1u);
  EXPECT_LT(measured, 100'000u);
  EXPECT_EQ(backend.recorded.size(), 3 + measured);  // the whole warm-up, then the measured
  EXPECT_EQ(out.timeline.meta["ended_early"]["measured_frames"], measured);
  EXPECT_NE(out.timeline.meta["ended_early"]["why"].get<std::string>().find("round_ms"),
            std::string::npos);

  // A limit the frames end before: every frame, and no "ended_early".
  FakeBackend again(2);
  s = settings(3, 10);
  s.measure_limit_ms = kMaxStudyRoundMs;
  FrameLoopOutcome all = run_frames(again, two_workloads(), s, {});
  EXPECT_EQ(all.timeline.frames.size(), 10u);
  EXPECT_FALSE(all.timeline.meta.contains("ended_early"));
}

}  // namespace
}  // namespace gpuoverlap
