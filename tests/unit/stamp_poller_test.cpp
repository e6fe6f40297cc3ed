// The poller against a CPU thread that plays the GPU: it writes stamps with atomic stores in
// a known causal order. Run under TSan in CI's sanitizer build.
#include "queues/stamp_poller.h"

#include <gtest/gtest.h>

#include <array>
#include <thread>

#include "core/clock.h"

namespace gpuoverlap {
namespace {

constexpr std::size_t kStride = 16;

void store(std::uint32_t* word, std::uint32_t value) {
  __atomic_store_n(word, value, __ATOMIC_RELEASE);
}

TEST(StampPoller, SeesEveryStampInCausalOrder) {
  alignas(64) std::array<std::uint32_t, 3 * kStride> words{};
  for (std::uint32_t frame = 1; frame <= 50; ++frame) {
    StampPoller poller;
    poller.arm(words.data(), kStride, 3, frame, monotonic_raw_ns() + 5'000'000'000);
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

TEST(StampPoller, OldFrameValuesDoNotCount) {
  alignas(64) std::array<std::uint32_t, kStride> words{};
  words[0] = 6;  // left over from frame 6
  words[1] = 6;
  StampPoller poller;
  poller.arm(words.data(), kStride, 1, 7, monotonic_raw_ns() + 50'000'000);
  const PollResult r = poller.wait();
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.start_ns[0].has_value());
  EXPECT_FALSE(r.end_ns[0].has_value());
}

TEST(StampPoller, MissingStampTimesOutAtTheDeadlineWithPartialResults) {
  alignas(64) std::array<std::uint32_t, 2 * kStride> words{};
  StampPoller poller;
  const std::int64_t armed = monotonic_raw_ns();
  poller.arm(words.data(), kStride, 2, 1, armed + 3'600'000'000'000);  // an hour
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
  poller.arm(words.data(), kStride, 1, 1, monotonic_raw_ns() + 10'000'000);
  poller.shorten_deadline(monotonic_raw_ns() + 3'600'000'000'000);
  const PollResult r = poller.wait();  // returns after ~10 ms, not an hour
  EXPECT_TRUE(r.timed_out);
}

}  // namespace
}  // namespace gpuoverlap
