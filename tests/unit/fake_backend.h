// A ScenarioBackend whose "GPU" is a script (tests of engine/frame_loop.h and
// engine/preemption_loop.h): frames whose stamps arrive at the gate's release, late, or
// never, waits that complete, time out or lose the device; stream submissions that complete
// at once, stall, or fail. The stamps are real memory that the loops' pollers watch.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <vector>

#include "core/clock.h"
#include "engine/scenario_backend.h"

namespace gpuoverlap::fakes {

// What the fake GPU does with one frame.
struct FakeFrame {
  bool stamps_at_release = true;       // every start and end stamp is written at the release
  std::vector<std::size_t> never_end;  // workloads whose end stamp is never written
  GpuStatus first_wait = GpuStatus::ok;
  // The wait of the grace period (only after a first wait that did not complete).
  GpuStatus grace_wait = GpuStatus::timeout;
  bool stamps_during_grace = false;  // the stamps arrive during the grace period
  GpuStatus submit = GpuStatus::ok;
  // A GPU that finishes while the frame loop polls ([cpu] gpu_wait spin or yield): when set,
  // the frame's waits 1 .. done_at_wait - 1 time out and wait done_at_wait and later return
  // done_status (ok completes the frame); first_wait and grace_wait are then not used.
  std::optional<int> done_at_wait;
  GpuStatus done_status = GpuStatus::ok;
};

class FakeBackend : public ScenarioBackend {
 public:
  static constexpr std::size_t kStrideWords = 16;

  explicit FakeBackend(std::size_t workloads)
      : workloads_(workloads), words_(workloads * kStrideWords) {
    // A queue per workload at most: enough for any scenario of this many workloads.
    device_facts.queues.resize(std::max<std::size_t>(workloads, 1));
    for (QueueFacts& q : device_facts.queues) q.timestamp_valid_bits = 64;
    device_facts.timestamps = {.available = true, .calibrated = true, .period_ns = 1.0};
    device_facts.max_workgroups_x = 65535;
  }
  // Every queue was granted `priority` (a fallback may grant less than asked).
  void grant_priority(QueuePriority priority) {
    for (QueueFacts& q : device_facts.queues) q.priority_granted = priority;
  }

  std::map<std::uint32_t, FakeFrame> script;  // by frame (from 1); absent: a good frame
  std::vector<std::uint32_t> recorded, submitted, released;
  std::uint32_t calibrations = 0;  // calibrate() calls
  int waits = 0;

  StampView stamps() const override {
    return evenly_spaced_stamps(words_.data(), kStrideWords, workloads_);
  }
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
    const int nth = ++waits_of_frame[frame];
    if (deadline_ns <= monotonic_raw_ns()) ++polls_of_frame[frame];
    const FakeFrame f = frame_script(frame);
    if (f.done_at_wait) {
      if (nth < *f.done_at_wait) return outcome(GpuStatus::timeout);
      if (f.done_status == GpuStatus::ok && !completed_ns.count(frame))
        completed_ns[frame] = monotonic_raw_ns();
      return outcome(f.done_status);
    }
    if (waited_once_.count(frame)) {
      if (f.stamps_during_grace) write_stamps(frame, {});
      if (f.grace_wait == GpuStatus::ok && !completed_ns.count(frame))
        completed_ns[frame] = monotonic_raw_ns();
      return outcome(f.grace_wait);
    }
    waited_once_[frame] = true;
    if (f.first_wait == GpuStatus::ok) completed_ns[frame] = monotonic_raw_ns();
    return outcome(f.first_wait);
  }
  // By frame: its waits, and of them the polls (a deadline already past: the wait only asks).
  std::map<std::uint32_t, int> waits_of_frame, polls_of_frame;
  // When each frame's wait first reported it complete (CLOCK_MONOTONIC_RAW).
  std::map<std::uint32_t, std::int64_t> completed_ns;
  std::vector<std::optional<TimestampTicks>> read_timestamps() override {
    // Ticks are CPU nanoseconds (see calibrate): 10 µs and 20 µs after the calibration.
    std::vector<std::optional<TimestampTicks>> ticks(workloads_);
    for (auto& t : ticks) t = TimestampTicks{calibration_ns_ + 10'000, calibration_ns_ + 20'000};
    return ticks;
  }
  std::optional<GpuCalibration> calibrate() override {
    ++calibrations;
    calibration_ns_ = static_cast<std::uint64_t>(monotonic_raw_ns());
    return GpuCalibration{.gpu_ticks = calibration_ns_,
                          .cpu_ns = static_cast<std::int64_t>(calibration_ns_),
                          .tick_period_ns = 1.0,
                          .valid_bits = 64,
                          .max_deviation_ns = 500};
  }
  Error timeout_error() const override { return Error{"fake timeout", 2, "FAKE_TIMEOUT"}; }
  background::BackgroundSession* background() override { return nullptr; }
  void bind_compute_variant(std::size_t, std::uint64_t) override {}
  int backgrounds_replaced = 0;  // replace_background calls
  Status replace_background(const Scenario&) override {
    ++backgrounds_replaced;
    return ok_status();
  }
  std::uint32_t last_frame() const override {
    return submitted.empty() ? 0 : *std::max_element(submitted.begin(), submitted.end());
  }
  bool marked_busy = false;  // set_gpu_may_be_busy was called
  void set_gpu_may_be_busy() override { marked_busy = true; }
  bool discarded = false;  // discard_device was called
  void discard_device() override { discarded = true; }
  // Timestamps of 64 valid bits and 1 ns ticks on every queue, no shader clock; a test sets
  // queues[q].priority_granted to play a refused priority.
  ScenarioDeviceFacts device_facts;
  const ScenarioDeviceFacts& facts() const override { return device_facts; }

  // --- streams (preemption): every submission completes at once unless scripted ----------
  // The work of a submission, in timestamp ticks (ns: the period is 1 ns): proportional to
  // its size, so that sizing a load by duration converges the same way every time.
  static std::uint64_t ticks_for(const preemption::LoadSize& size) {
    return std::uint64_t{size.groups} * size.iterations * std::max<std::uint32_t>(size.draws, 1) *
           1000;
  }
  std::optional<std::uint32_t> urgent_stalls_from;    // this urgent job and later never finish
  std::optional<std::uint32_t> urgent_lost_at;        // waiting for this urgent job: device lost
  std::optional<std::uint32_t> load_submit_fails_at;  // submitting this load fails
  std::optional<StreamLayout> layout;
  std::vector<StreamSubmission> stream_submissions;

  Status prepare_streams(const StreamLayout& l) override {
    layout = l;
    return ok_status();
  }
  std::optional<std::uint32_t> load_record_fails_at;  // recording this load fails
  Status record_stream(const StreamSubmission& s) override {
    if (s.stream == Stream::load && load_record_fails_at == s.sequence)
      return make_error("fake recording failed");
    return ok_status();
  }
  GpuOutcome submit_stream(const StreamSubmission& s) override {
    stream_submissions.push_back(s);
    const bool urgent = s.stream == Stream::urgent;
    if (!urgent && load_submit_fails_at == s.sequence) return outcome(GpuStatus::failed);
    const bool completes = !(urgent && urgent_stalls_from && s.sequence >= *urgent_stalls_from);
    std::vector<std::optional<TimestampTicks>>& ticks = ring_ticks_[{urgent, s.ring}];
    ticks.assign(2, std::nullopt);
    std::uint64_t now_ticks = calibration_ns_;
    for (const StreamPart& part : s.parts) {
      __atomic_store_n(&words_[part.workload * kStrideWords + kStampStartFrameWord], s.sequence,
                       __ATOMIC_RELEASE);
      if (!completes) continue;
      __atomic_store_n(&words_[part.workload * kStrideWords + kStampEndFrameWord], s.sequence,
                       __ATOMIC_RELEASE);
      ticks[part.part] = TimestampTicks{now_ticks, now_ticks + ticks_for(part.size)};
    }
    if (completes) completed_[urgent] = s.sequence;
    return GpuOutcome::ok();
  }
  GpuOutcome stream_completed(Stream stream, std::uint64_t& value) override {
    value = completed_[stream == Stream::urgent];
    return GpuOutcome::ok();
  }
  GpuOutcome wait_stream(Stream stream, std::uint64_t sequence, std::int64_t deadline_ns) override {
    EXPECT_GT(deadline_ns, 0);
    const bool urgent = stream == Stream::urgent;
    if (urgent && urgent_lost_at && sequence >= *urgent_lost_at)
      return outcome(GpuStatus::device_lost);
    return completed_[urgent] >= sequence ? GpuOutcome::ok() : outcome(GpuStatus::timeout);
  }
  std::vector<std::optional<TimestampTicks>> read_stream_timestamps(Stream stream,
                                                                    std::uint32_t ring,
                                                                    std::size_t parts) override {
    std::vector<std::optional<TimestampTicks>> ticks =
        ring_ticks_[{stream == Stream::urgent, ring}];
    ticks.resize(parts);
    return ticks;
  }

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
  std::map<bool, std::uint64_t> completed_;  // by urgent: the completion counter
  std::map<std::pair<bool, std::uint32_t>, std::vector<std::optional<TimestampTicks>>> ring_ticks_;
};

}  // namespace gpuoverlap::fakes
