// The frame loop (engine/frame_loop.h) on a fake backend whose "GPU" is scripted per frame:
// stamps written at the gate's release (or late, or never), waits that complete, time out or
// lose the device, a submission that fails. No GPU, no timing asserted: only which records,
// statuses, failures and calls the loop makes.
#include "engine/frame_loop.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/clock.h"

namespace gpuoverlap {
namespace {

// What the fake GPU does with one frame.
struct FakeFrame {
  bool stamps_at_release = true;       // every start and end stamp is written at the release
  std::vector<std::size_t> never_end;  // workloads whose end stamp is never written
  GpuStatus first_wait = GpuStatus::ok;
  // The wait of the grace period (only after a first wait that did not complete).
  GpuStatus grace_wait = GpuStatus::timeout;
  bool stamps_during_grace = false;  // the stamps arrive during the grace period
  GpuStatus submit = GpuStatus::ok;
};

class FakeBackend final : public FrameBackend {
 public:
  static constexpr std::size_t kStrideWords = 16;

  explicit FakeBackend(std::size_t workloads)
      : workloads_(workloads), words_(workloads * kStrideWords) {}

  std::map<std::uint32_t, FakeFrame> script;  // by frame (from 1); absent: a good frame
  std::vector<std::uint32_t> recorded, submitted, released;
  int waits = 0;

  StampView stamps() const override { return {words_.data(), kStrideWords, workloads_}; }
  Status record_frame(std::uint32_t frame) override {
    recorded.push_back(frame);
    return ok_status();
  }
  GpuOutcome submit_frame(std::uint32_t frame) override {
    submitted.push_back(frame);
    return outcome(frame_script(frame).submit);
  }
  GpuOutcome release_gate(std::uint32_t frame) override {
    released.push_back(frame);
    const FakeFrame f = frame_script(frame);
    if (f.stamps_at_release) write_stamps(frame, f.never_end);
    return GpuOutcome::ok();
  }
  GpuOutcome wait_frame(std::uint32_t frame, std::int64_t deadline_ns) override {
    EXPECT_GT(deadline_ns, 0);
    ++waits;
    const FakeFrame f = frame_script(frame);
    if (waited_once_.count(frame)) {
      if (f.stamps_during_grace) write_stamps(frame, {});
      return outcome(f.grace_wait);
    }
    waited_once_[frame] = true;
    return outcome(f.first_wait);
  }
  std::vector<std::optional<TimestampTicks>> read_timestamps() override {
    // Ticks are CPU nanoseconds (see calibrate): 10 µs and 20 µs after the calibration.
    std::vector<std::optional<TimestampTicks>> ticks(workloads_);
    for (auto& t : ticks) t = TimestampTicks{calibration_ns_ + 10'000, calibration_ns_ + 20'000};
    return ticks;
  }
  std::uint32_t timestamp_valid_bits(std::size_t) const override { return 64; }
  std::optional<GpuCalibration> calibrate() override {
    calibration_ns_ = static_cast<std::uint64_t>(monotonic_raw_ns());
    return GpuCalibration{.gpu_ticks = calibration_ns_,
                          .cpu_ns = static_cast<std::int64_t>(calibration_ns_),
                          .tick_period_ns = 1.0,
                          .valid_bits = 64,
                          .max_deviation_ns = 500};
  }
  bool shader_clock_enabled() const override { return false; }
  Error timeout_error() const override { return Error{"fake timeout", 2, "FAKE_TIMEOUT"}; }
  background::BackgroundSession* background() override { return nullptr; }
  nlohmann::json device_meta() const override { return {{"device", "fake"}}; }

 private:
  FakeFrame frame_script(std::uint32_t frame) const {
    auto it = script.find(frame);
    return it == script.end() ? FakeFrame{} : it->second;
  }
  static GpuOutcome outcome(GpuStatus status) {
    switch (status) {
      case GpuStatus::ok:
        return GpuOutcome::ok();
      case GpuStatus::timeout:
        return {status, Error{"fake wait: FAKE_TIMEOUT", 2, "FAKE_TIMEOUT"}};
      case GpuStatus::device_lost:
        return {status, Error{"fake: FAKE_DEVICE_LOST", -4, "FAKE_DEVICE_LOST"}};
      case GpuStatus::failed:
        return {status, Error{"fake: FAKE_ERROR", -1, "FAKE_ERROR"}};
    }
    return GpuOutcome::ok();
  }
  void write_stamps(std::uint32_t frame, const std::vector<std::size_t>& never_end) {
    for (std::size_t w = 0; w < workloads_; ++w) {
      __atomic_store_n(&words_[w * kStrideWords + kStampStartFrameWord], frame, __ATOMIC_RELEASE);
      bool skip = false;
      for (std::size_t n : never_end) skip = skip || n == w;
      if (!skip)
        __atomic_store_n(&words_[w * kStrideWords + kStampEndFrameWord], frame, __ATOMIC_RELEASE);
    }
  }

  std::size_t workloads_;
  std::vector<std::uint32_t> words_;
  std::map<std::uint32_t, bool> waited_once_;
  std::uint64_t calibration_ns_ = 0;
};

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
  ASSERT_EQ(progress.size(), 7u);
  EXPECT_EQ(progress.back(), (std::pair<std::uint32_t, std::uint32_t>{7, 7}));
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
  EXPECT_EQ(out.timeline.meta["device"], "fake");
  EXPECT_EQ(out.timeline.meta["clocks"]["timestamp"]["max_calibration_deviation_ns"], 500.0);
  EXPECT_EQ(out.timeline.meta["clocks"]["timestamp"]["drift"]["calibrations"], 5);
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
  EXPECT_EQ(out.timeline.failure->message, "frame 1: fake: FAKE_DEVICE_LOST");
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
  EXPECT_EQ(out.timeline.failure->message, "warm-up frame 1 of 3: fake: FAKE_ERROR");
  EXPECT_TRUE(out.timeline.records.empty());
  EXPECT_TRUE(out.timeline.frames.empty());
}

TEST(FrameLoop, AStopRequestEndsTheRunAtAFrameBoundaryKeepingWhatWasMeasured) {
  FakeBackend backend(2);
  RunSettings s = settings(1, 10);
  int frames_done = 0;
  s.should_stop = [&] { return frames_done == 4; };
  FrameLoopOutcome out =
      run_frames(backend, two_workloads(), s, [&](std::uint32_t, std::uint32_t) { ++frames_done; });
  ASSERT_TRUE(out.timeline.failure);
  EXPECT_EQ(out.timeline.failure->message, "interrupted after 4 of 11 frames");
  EXPECT_FALSE(out.gpu_may_be_busy);
  EXPECT_EQ(out.timeline.frames.size(), 3u);
  for (const WorkloadFrameRecord& r : out.timeline.records) EXPECT_EQ(r.status, RecordStatus::ok);
}

}  // namespace
}  // namespace gpuoverlap
