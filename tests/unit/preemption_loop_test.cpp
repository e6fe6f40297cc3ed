// The preemption loop (engine/preemption_loop.h) on the scripted fake backend: load sizing by
// duration, the baseline, the cadence, a stalled urgent job, device loss, a failed load
// submission, the load-only role and its stop hook, a refused priority recorded as granted.
// No timing is asserted: a short real run (tens of ms), and what the loop submitted and wrote.
#include "engine/preemption_loop.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "fake_backend.h"
#include "preemption/load_calibration.h"

namespace gpuoverlap {
namespace {

using fakes::FakeBackend;
using preemption::PreemptionSpec;
using preemption::Role;

PreemptionSpec short_spec() {
  PreemptionSpec spec;
  spec.target_ms = 2;
  spec.period_ms = 5;
  spec.duration_ms = 40;
  spec.baseline_loads = 2;
  spec.priority = QueuePriority::high;
  return spec;
}

RunSettings settings() {
  RunSettings r;
  r.frame_timeout_ms = 60'000;  // the fake answers at once; a loaded machine must not matter
  return r;
}

std::size_t count(const std::vector<StreamSubmission>& all, Stream stream) {
  return static_cast<std::size_t>(std::count_if(
      all.begin(), all.end(), [&](const StreamSubmission& s) { return s.stream == stream; }));
}

TEST(PreemptionLoop, SizesTheLoadMeasuresItAloneThenKeepsTheCadenceAndDrains) {
  const PreemptionSpec spec = short_spec();
  const Scenario scenario = preemption::make_scenario(spec, Role::both, "p");
  FakeBackend backend(scenario.workloads.size());
  backend.grant_priority(QueuePriority::high);
  PreemptionLoopOutcome out = run_preemption_loop(backend, scenario, settings(), {}, {});

  ASSERT_FALSE(out.timeline.failure) << out.timeline.failure->message;
  EXPECT_FALSE(out.gpu_may_be_busy);
  ASSERT_TRUE(backend.layout);
  EXPECT_EQ(backend.layout->load_parts, std::vector<std::size_t>{0});
  EXPECT_EQ(backend.layout->urgent, std::optional<std::size_t>{1});
  EXPECT_TRUE(backend.layout->timestamps);
  ASSERT_TRUE(out.timeline.preemption);
  const preemption::PreemptionRunInfo& info = *out.timeline.preemption;
  EXPECT_EQ(info.priority_granted, QueuePriority::high);
  // Sized by the fake's ticks, which grow with the size: the last probe reached the target.
  ASSERT_FALSE(info.calibration.empty());
  EXPECT_TRUE(info.calibrated);
  EXPECT_GE(info.calibration.back().measured_ms, spec.target_ms * 0.5);
  ASSERT_EQ(info.load_sizes.size(), 1u);
  EXPECT_EQ(info.load_sizes[0], info.calibration.back().size);
  // Every tick of the urgent phase was a submission or a skipped tick.
  const std::size_t urgent = count(backend.stream_submissions, Stream::urgent);
  const auto skipped = out.timeline.meta["preemption"]["skipped_ticks"].get<std::size_t>();
  EXPECT_EQ(urgent + skipped,
            static_cast<std::size_t>(std::ceil(spec.duration_ms / spec.period_ms)));
  // Records: one per urgent job (a frame each) and per measured load (baseline included);
  // calibration probes are not measured.
  EXPECT_EQ(out.timeline.frames.size(), urgent);
  const std::size_t loads =
      count(backend.stream_submissions, Stream::load) - info.calibration.size();
  EXPECT_EQ(out.timeline.records.size(), urgent + loads);
  for (const WorkloadFrameRecord& r : out.timeline.records) {
    EXPECT_EQ(r.status, RecordStatus::ok);
    ASSERT_TRUE(r.ts_start_us && r.ts_end_us);  // the fake's ticks, placed on the CPU clock
    EXPECT_LE(*r.ts_start_us, *r.ts_end_us);
  }
  // Submissions of a stream are numbered from 1 and reuse the ring in order.
  std::uint32_t expected = 0;
  for (const StreamSubmission& s : backend.stream_submissions)
    if (s.stream == Stream::urgent) {
      EXPECT_EQ(s.sequence, ++expected);
      EXPECT_EQ(s.ring, (s.sequence - 1) % backend.layout->urgent_ring);
      ASSERT_EQ(s.parts.size(), 1u);
      EXPECT_EQ(s.parts[0].size.groups, spec.urgent_groups);
    }
  EXPECT_EQ(out.timeline.meta["max_workgroups_x"], 65535);  // the backend's facts, written
  EXPECT_EQ(out.timeline.meta["preemption"]["baseline_loads"], spec.baseline_loads);
}

TEST(PreemptionLoop, AStalledUrgentJobIsATimeoutThatLeavesTheGpuBusy) {
  const Scenario scenario = preemption::make_scenario(short_spec(), Role::both, "p");
  FakeBackend backend(scenario.workloads.size());
  backend.urgent_stalls_from = 3;
  PreemptionLoopOutcome out = run_preemption_loop(backend, scenario, settings(), {}, {});
  ASSERT_TRUE(out.timeline.failure);
  EXPECT_EQ(
      out.timeline.failure->message,
      "an urgent job did not finish within 60000 ms of its submission (--timeout-ms); stopped");
  EXPECT_EQ(out.timeline.failure->api_code_name, "FAKE_TIMEOUT");
  EXPECT_TRUE(out.gpu_may_be_busy);
  std::size_t timeouts = 0;
  for (const FrameRecord& f : out.timeline.frames) timeouts += f.status == RecordStatus::timeout;
  EXPECT_GE(timeouts, 1u);
  EXPECT_EQ(out.timeline.frames[0].status, RecordStatus::ok);
  EXPECT_EQ(out.timeline.frames[1].status, RecordStatus::ok);
}

TEST(PreemptionLoop, DeviceLossWhileWaitingMarksWhatWasInFlight) {
  const Scenario scenario = preemption::make_scenario(short_spec(), Role::both, "p");
  FakeBackend backend(scenario.workloads.size());
  backend.urgent_stalls_from = 2;
  backend.urgent_lost_at = 2;
  PreemptionLoopOutcome out = run_preemption_loop(backend, scenario, settings(), {}, {});
  ASSERT_TRUE(out.timeline.failure);
  EXPECT_EQ(out.timeline.failure->message, "waiting for a submission failed: FAKE_DEVICE_LOST");
  EXPECT_TRUE(out.gpu_may_be_busy);
  ASSERT_GE(out.timeline.frames.size(), 2u);
  EXPECT_EQ(out.timeline.frames[1].status, RecordStatus::device_lost);
}

TEST(PreemptionLoop, AFailedLoadSubmissionStopsTheCalibrationAndSaysSo) {
  const Scenario scenario = preemption::make_scenario(short_spec(), Role::both, "p");
  FakeBackend backend(scenario.workloads.size());
  backend.load_submit_fails_at = 2;
  PreemptionLoopOutcome out = run_preemption_loop(backend, scenario, settings(), {}, {});
  ASSERT_TRUE(out.timeline.failure);
  const std::string& message = out.timeline.failure->message;
  EXPECT_EQ(message.rfind("load calibration: calibrating ", 0), 0u) << message;
  EXPECT_NE(message.find(": submitting the load failed: FAKE_ERROR"), std::string::npos) << message;
  EXPECT_TRUE(out.timeline.records.empty());  // nothing measured: no urgent phase
  EXPECT_EQ(count(backend.stream_submissions, Stream::urgent), 0u);
}

TEST(PreemptionLoop, ARecordingThatFailsIsNotASubmissionAndLeavesTheGpuIdle) {
  const Scenario scenario = preemption::make_scenario(short_spec(), Role::both, "p");
  FakeBackend backend(scenario.workloads.size());
  backend.load_record_fails_at = 1;
  PreemptionLoopOutcome out = run_preemption_loop(backend, scenario, settings(), {}, {});
  ASSERT_TRUE(out.timeline.failure);
  EXPECT_NE(out.timeline.failure->message.find(": fake recording failed"), std::string::npos)
      << out.timeline.failure->message;
  EXPECT_FALSE(out.gpu_may_be_busy);  // nothing was submitted
  EXPECT_TRUE(backend.stream_submissions.empty());
}

TEST(PreemptionLoop, TheLoadOnlyRoleAnnouncesLoadingAndStopsWhenTold) {
  const Scenario scenario = preemption::make_scenario(short_spec(), Role::load_only, "l");
  FakeBackend backend(scenario.workloads.size());
  int announced = 0, polls = 0;
  PreemptionHooks hooks;
  hooks.on_loading = [&](const ScenarioTimeline& so_far) {
    ++announced;
    EXPECT_TRUE(so_far.preemption && !so_far.preemption->load_sizes.empty());
  };
  hooks.stop_loading = [&] { return announced > 0 && ++polls > 20; };
  PreemptionLoopOutcome out = run_preemption_loop(backend, scenario, settings(), {}, hooks);
  ASSERT_FALSE(out.timeline.failure) << out.timeline.failure->message;
  EXPECT_EQ(announced, 1);
  EXPECT_FALSE(backend.layout->urgent);
  EXPECT_EQ(count(backend.stream_submissions, Stream::urgent), 0u);
  EXPECT_TRUE(out.timeline.frames.empty());  // frames are the urgent jobs'
  EXPECT_FALSE(out.timeline.records.empty());
}

TEST(PreemptionLoop, ALowerGrantedPriorityIsWhatTheRunReports) {
  const Scenario scenario = preemption::make_scenario(short_spec(), Role::both, "p");
  FakeBackend backend(scenario.workloads.size());
  backend.grant_priority(QueuePriority::normal);  // asked for high (a fallback granted less)
  PreemptionLoopOutcome out = run_preemption_loop(backend, scenario, settings(), {}, {});
  ASSERT_FALSE(out.timeline.failure);
  EXPECT_EQ(out.timeline.preemption->priority_granted, QueuePriority::normal);
  EXPECT_EQ(out.timeline.meta["preemption"]["priority_granted"], "normal");
}

TEST(PreemptionLoop, AStopRequestEndsTheUrgentPhaseAndDrains) {
  const Scenario scenario = preemption::make_scenario(short_spec(), Role::both, "p");
  FakeBackend backend(scenario.workloads.size());
  RunSettings s = settings();
  s.should_stop = [&] { return count(backend.stream_submissions, Stream::urgent) >= 2; };
  PreemptionLoopOutcome out = run_preemption_loop(backend, scenario, s, {}, {});
  ASSERT_TRUE(out.timeline.failure);
  EXPECT_EQ(out.timeline.failure->message.rfind("interrupted after ", 0), 0u)
      << out.timeline.failure->message;
  EXPECT_FALSE(out.gpu_may_be_busy);
  EXPECT_EQ(out.timeline.frames.size(), 2u);
}

}  // namespace
}  // namespace gpuoverlap
