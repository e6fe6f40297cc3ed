// The poller against a CPU thread that plays the GPU: it writes stamps with atomic stores in
// a known causal order. Run under TSan in CI's sanitizer build.
#include "queues/stamp_poller.h"

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "core/cpu_affinity.h"
#include "queues/poller_placement.h"
#include "timeline/clock_agreement.h"

namespace gpuoverlap {
namespace {

constexpr std::size_t kStride = 16;

// `count` slots kStride words apart from `words`.
std::vector<const std::uint32_t*> slots_of(const std::uint32_t* words, std::size_t count) {
  std::vector<const std::uint32_t*> slots;
  for (std::size_t s = 0; s < count; ++s) slots.push_back(words + s * kStride);
  return slots;
}

void store(std::uint32_t* word, std::uint32_t value) {
  __atomic_store_n(word, value, __ATOMIC_RELEASE);
}

TEST(StampPoller, SeesEveryStampInCausalOrder) {
  alignas(64) std::array<std::uint32_t, 3 * kStride> words{};
  for (std::uint32_t frame = 1; frame <= 50; ++frame) {
    StampPoller poller;
    poller.arm(slots_of(words.data(), 3), frame, monotonic_raw_ns() + 5'000'000'000);
    // A chain: slot 0 runs, then slot 1 (depends on 0), then slot 2 (depends on 1).
    std::thread gpu([&] {
      for (std::size_t slot = 0; slot < 3; ++slot) {
        store(&words[slot * kStride], frame);
        store(&words[slot * kStride + 1], frame);
      }
    });
    gpu.join();
    const PollResult r = poller.wait();
    ASSERT_FALSE(r.timed_out);
    for (std::size_t slot = 0; slot < 3; ++slot) {
      ASSERT_TRUE(r.start_ns[slot] && r.end_ns[slot]);
      EXPECT_LE(*r.start_ns[slot], *r.end_ns[slot]);
      if (slot > 0) {
        EXPECT_LE(*r.end_ns[slot - 1], *r.start_ns[slot]) << "frame " << frame;
      }
    }
  }
}

// Slots in two buffers, interleaved (a D3D12 copy's slot lies in a buffer of its own): each
// slot's stamps are read where its pointer says, none from the other buffer.
TEST(StampPoller, ReadsEachSlotWhereItLies) {
  alignas(64) std::array<std::uint32_t, 2 * kStride> shaders{};
  alignas(64) std::array<std::uint32_t, 2 * kStride> copies{};
  const std::vector<const std::uint32_t*> slots = {shaders.data(), copies.data() + kStride,
                                                   shaders.data() + kStride};
  StampPoller poller;
  poller.arm(slots, 5, monotonic_raw_ns() + 5'000'000'000);
  std::thread gpu([&] {
    store(&shaders[0], 5);
    store(&shaders[1], 5);
    store(&copies[kStride], 5);  // slot 1 starts...
    store(&copies[0], 5);        // ...and a word no slot names changes
    store(&copies[kStride + 1], 5);
    store(&shaders[kStride], 5);
    store(&shaders[kStride + 1], 5);
  });
  gpu.join();
  const PollResult r = poller.wait();
  ASSERT_FALSE(r.timed_out);
  for (std::size_t slot = 0; slot < 3; ++slot) {
    ASSERT_TRUE(r.start_ns[slot] && r.end_ns[slot]) << slot;
    EXPECT_LE(*r.start_ns[slot], *r.end_ns[slot]);
  }
  EXPECT_LE(*r.end_ns[0], *r.start_ns[1]);
  EXPECT_LE(*r.end_ns[1], *r.start_ns[2]);
}

// The same slots with one never written: the poller names that one missing at its deadline.
TEST(StampPoller, ASlotInAnUnwrittenBufferTimesOut) {
  alignas(64) std::array<std::uint32_t, kStride> shaders{};
  alignas(64) std::array<std::uint32_t, kStride> copies{};
  StampPoller poller;
  const std::vector<const std::uint32_t*> slots = {shaders.data(), copies.data()};
  poller.arm(slots, 3, monotonic_raw_ns() + 50'000'000);
  store(&shaders[0], 3);
  store(&shaders[1], 3);
  const PollResult r = poller.wait();
  EXPECT_TRUE(r.timed_out);
  EXPECT_TRUE(r.start_ns[0] && r.end_ns[0]);
  EXPECT_FALSE(r.start_ns[1] || r.end_ns[1]);
}

// Each stamp's detection window holds its write: the writer reads the clock just before and
// just after each store, and [seen - window, seen] must meet [before, after].
TEST(StampPoller, EveryWindowContainsItsWriteTime) {
  alignas(64) std::array<std::uint32_t, 4 * kStride> words{};
  for (std::uint32_t frame = 1; frame <= 50; ++frame) {
    StampPoller poller;
    poller.arm(slots_of(words.data(), 4), frame, monotonic_raw_ns() + 5'000'000'000);
    std::array<std::pair<std::int64_t, std::int64_t>, 8> written{};  // [before, after] per word
    std::thread gpu([&] {
      for (std::size_t word = 0; word < 8; ++word) {
        written[word].first = monotonic_raw_ns();
        // Sequentially consistent: the store is visible to the poller before the clock is
        // read again (a release store can wait in the store buffer past it).
        __atomic_store_n(&words[(word / 2) * kStride + word % 2], frame, __ATOMIC_SEQ_CST);
        written[word].second = monotonic_raw_ns();
      }
    });
    gpu.join();
    const PollResult r = poller.wait();
    ASSERT_FALSE(r.timed_out);
    EXPECT_GT(r.scans, 0u);
    for (std::size_t word = 0; word < 8; ++word) {
      const std::size_t slot = word / 2;
      const std::int64_t seen = word % 2 ? *r.end_ns[slot] : *r.start_ns[slot];
      const std::int64_t window = word % 2 ? r.end_window_ns[slot] : r.start_window_ns[slot];
      EXPECT_GE(window, 0);
      EXPECT_LE(seen - window, written[word].second) << "frame " << frame << " word " << word;
      EXPECT_GE(seen, written[word].first) << "frame " << frame << " word " << word;
    }
  }
}

// A poller that loses its CPU for 5 ms (the hook plays the scheduler) while a stamp is written
// sees it at least 5 ms after its window began: the window says how late it may be, and the
// run's tolerance flags it disturbed.
TEST(StampPoller, APollerStoppedFor5MsGivesWindowsOfAtLeast5Ms) {
  alignas(64) std::array<std::uint32_t, kStride> words{};
  StampPoller poller;
  std::atomic<bool> stop_next{false}, stopped{false}, written{false};
  poller.set_pass_hook([&] {
    if (!stop_next.exchange(false)) return;
    stopped.store(true);
    while (!written.load()) std::this_thread::yield();  // the stamp lands while it is stopped
    const std::int64_t until = monotonic_raw_ns() + 5'000'000;
    while (monotonic_raw_ns() < until) std::this_thread::yield();
  });
  poller.arm(slots_of(words.data(), 1), 1, monotonic_raw_ns() + 5'000'000'000);
  stop_next.store(true);
  while (!stopped.load()) std::this_thread::yield();
  store(&words[0], 1);
  store(&words[1], 1);
  written.store(true);
  const PollResult r = poller.wait();
  ASSERT_FALSE(r.timed_out);
  EXPECT_GE(r.start_window_ns[0], 5'000'000);
  EXPECT_GE(r.end_window_ns[0], 5'000'000);
  EXPECT_GE(r.max_scan_gap_ns, 5'000'000);

  // As a run records it: both stamps flagged and counted, against the default tolerance.
  ScenarioTimeline timeline;
  for (std::uint32_t frame = 0; frame < 20; ++frame) {
    WorkloadFrameRecord quiet;
    quiet.frame = frame;
    quiet.poll_start_window_us = 0.2;
    quiet.poll_end_window_us = 0.3;
    timeline.records.push_back(quiet);
  }
  timeline.records[7].poll_start_window_us = static_cast<double>(r.start_window_ns[0]) / 1000.0;
  timeline.records[7].poll_end_window_us = static_cast<double>(r.end_window_ns[0]) / 1000.0;
  const nlohmann::json judged = mark_poll_disturbance(timeline, std::nullopt);
  EXPECT_EQ(judged["disturbed_stamps"], 2);
  EXPECT_EQ(judged["stamps"], 40);
  EXPECT_DOUBLE_EQ(judged["tolerance_us"].get<double>(), kDisturbanceFloorUs)
      << "8 x the p10 window is under the floor: " << judged.dump();
  EXPECT_EQ(timeline.records[7].poll_disturbed, kPollStartDisturbed | kPollEndDisturbed);
  EXPECT_EQ(timeline.records[6].poll_disturbed, 0u);
  // A tolerance given wins over the scenario's own windows.
  EXPECT_EQ(mark_poll_disturbance(timeline, 0.25)["disturbed_stamps"], 21);
  // A slower host's quiet windows set it (8 x the p10), however many stamps were disturbed:
  // every end stamp time-sliced by 4 ms is disturbed, though they are half of all.
  for (WorkloadFrameRecord& q : timeline.records) {
    q.poll_start_window_us = 0.5;
    q.poll_end_window_us = 4000.0;
  }
  const nlohmann::json sliced = mark_poll_disturbance(timeline, std::nullopt);
  EXPECT_DOUBLE_EQ(sliced["tolerance_us"].get<double>(), 4.0) << sliced.dump();
  EXPECT_EQ(sliced["disturbed_stamps"], 20);
}

TEST(StampPoller, OldFrameValuesDoNotCount) {
  alignas(64) std::array<std::uint32_t, kStride> words{};
  words[0] = 6;  // left over from frame 6
  words[1] = 6;
  StampPoller poller;
  poller.arm(slots_of(words.data(), 1), 7, monotonic_raw_ns() + 50'000'000);
  const PollResult r = poller.wait();
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.start_ns[0].has_value());
  EXPECT_FALSE(r.end_ns[0].has_value());
}

TEST(StampPoller, MissingStampTimesOutAtTheDeadlineWithPartialResults) {
  alignas(64) std::array<std::uint32_t, 2 * kStride> words{};
  StampPoller poller;
  const std::int64_t armed = monotonic_raw_ns();
  poller.arm(slots_of(words.data(), 2), 1, armed + 3'600'000'000'000);  // an hour
  store(&words[0], 1);
  store(&words[1], 1);
  store(&words[kStride], 1);  // slot 1 starts but never ends
  poller.shorten_deadline(monotonic_raw_ns() + 20'000'000);
  const PollResult r = poller.wait();
  EXPECT_TRUE(r.timed_out);
  EXPECT_TRUE(r.start_ns[0] && r.end_ns[0] && r.start_ns[1]);
  EXPECT_FALSE(r.end_ns[1].has_value());
}

TEST(StampPoller, ShortenDeadlineNeverExtendsIt) {
  alignas(64) std::array<std::uint32_t, kStride> words{};
  StampPoller poller;
  poller.arm(slots_of(words.data(), 1), 1, monotonic_raw_ns() + 10'000'000);
  poller.shorten_deadline(monotonic_raw_ns() + 3'600'000'000'000);
  const PollResult r = poller.wait();  // returns after ~10 ms, not an hour
  EXPECT_TRUE(r.timed_out);
}

}  // namespace
}  // namespace gpuoverlap

#include "queues/deadline_diagnosis.h"

namespace gpuoverlap {
namespace {

TEST(DeadlineDiagnosis, FrameNumbersMatchFramesCsv) {
  EXPECT_EQ(frame_label(0, 10), "warm-up frame 1 of 10");
  EXPECT_EQ(frame_label(9, 10), "warm-up frame 10 of 10");
  EXPECT_EQ(frame_label(10, 10), "frame 0");
  EXPECT_EQ(frame_label(3, 0), "frame 3");
}

TEST(DeadlineDiagnosis, NamesWhatHappened) {
  DeadlineFacts f{.frame = "frame 4", .timeout_ms = 75, .grace_ms = 100, .workloads = 3};
  // Finished just past the deadline, every stamp there: late, not incoherent memory.
  f.started_at_deadline = 3, f.finished_at_deadline = 2;
  f.started_after_grace = f.finished_after_grace = 3;
  f.gpu_finished = true, f.gpu_finished_ms = 75.4;
  std::string text = describe_missed_deadline(f);
  EXPECT_NE(text.find("frame 4 missed its deadline: the GPU finished it 75.4 ms after"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("coherent"), std::string::npos);
  // Finished, a stamp still missing after the grace period: stamps lost.
  f.finished_after_grace = 2;
  text = describe_missed_deadline(f);
  EXPECT_NE(text.find("1 of 3 workloads' stamps never reached the CPU"), std::string::npos) << text;
  // Not finished, but more stamps during the grace period: still running.
  f.gpu_finished = false, f.gpu_finished_ms.reset();
  f.started_at_deadline = 1, f.finished_at_deadline = 0;
  f.started_after_grace = 2, f.finished_after_grace = 1;
  text = describe_missed_deadline(f);
  EXPECT_NE(text.find("still running at the --timeout-ms 75 deadline (1 of 3 workloads started, "
                      "0 finished; 100 ms later 2 started, 1 finished)"),
            std::string::npos)
      << text;
  // Nothing moved: stuck or lost.
  f.started_after_grace = 1, f.finished_after_grace = 0;
  text = describe_missed_deadline(f);
  EXPECT_NE(text.find("nor 100 ms later, and no stamp moved in between (1 of 3 workloads "
                      "started, 0 finished)"),
            std::string::npos)
      << text;
  f.device_lost = true;
  text = describe_missed_deadline(f);
  EXPECT_NE(text.find("frame 4: the device was lost"), std::string::npos) << text;
}

}  // namespace
}  // namespace gpuoverlap

namespace gpuoverlap {
namespace {

// The placement a command line asks for: a CPU of the mask, auto, none; anything else is
// refused naming the usable CPUs. auto gives the mask's first CPU where there are enough to
// spare one, else leaves the poller unpinned (a 2-core CI machine).
TEST(PollerPlacement, AutoNoneOrACpuOfTheMaskAndNothingElse) {
  const std::vector<int> cpus = usable_cpu_ids();
  ASSERT_FALSE(cpus.empty());
  const auto automatic = poller_placement("auto", PollerPriority::high);
  ASSERT_TRUE(automatic.ok());
  EXPECT_EQ(automatic->priority, PollerPriority::high);
  if (cpus.size() >= kMinCpusForOwnPollerCore) {
    EXPECT_EQ(automatic->cpu, quietest_cpu(cpus));
    EXPECT_TRUE(automatic->automatic);
  } else {
    EXPECT_FALSE(automatic->cpu);
    EXPECT_FALSE(automatic->automatic);
  }
  const auto none = poller_placement("none", PollerPriority::normal);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->cpu);
  const auto last = poller_placement(std::to_string(cpus.back()), PollerPriority::normal);
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(last->cpu, cpus.back());
  EXPECT_FALSE(last->automatic);
  for (const char* bad : {"x", "-1", "1.5", "", "3x"}) {
    const auto refused = poller_placement(bad, PollerPriority::normal);
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_NE(refused.error().message.find("give a CPU number, auto or none"), std::string::npos)
        << refused.error().message;
  }
  const auto outside = poller_placement("4095", PollerPriority::normal);
  ASSERT_FALSE(outside.ok());
  EXPECT_NE(outside.error().message.find("not a CPU this process may run on"), std::string::npos);
  // The quietest CPU is one of those given, whatever the interrupts' routing.
  const int quiet = quietest_cpu(cpus);
  EXPECT_NE(std::find(cpus.begin(), cpus.end(), quiet), cpus.end());
  EXPECT_EQ(quietest_cpu({cpus.back()}), cpus.back());
  const nlohmann::json meta = to_json(*automatic, PollerGranted{}, false);
  EXPECT_EQ(meta["cpu_requested"], automatic->automatic ? nlohmann::json("auto") : nullptr);
}

}  // namespace
}  // namespace gpuoverlap
