// The stamp poller's one thread for its life (queues/stamp_poller.h): the same thread every
// frame, each stamp in its own frame's result once, shutdown while armed, a stuck thread given
// up on at its deadline, and what each frame cost the frame loop. Run under TSan in CI.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "core/thread_accounting.h"
#include "queues/stamp_poller.h"

namespace gpuoverlap {
namespace poller_thread_test {

constexpr std::size_t kStride = 16;

std::vector<const std::uint32_t*> slots_of(const std::uint32_t* words, std::size_t count) {
  std::vector<const std::uint32_t*> slots;
  for (std::size_t s = 0; s < count; ++s) slots.push_back(words + s * kStride);
  return slots;
}

void store(std::uint32_t* word, std::uint32_t value) {
  __atomic_store_n(word, value, __ATOMIC_RELEASE);
}

constexpr std::int64_t kMinute = 60'000'000'000;

TEST(StampPollerThread, OneThreadPollsEveryFrameAndSeesEachStampOnce) {
  alignas(64) std::array<std::uint32_t, 2 * kStride> words{};
  StampPoller poller;
  std::int64_t thread_id = 0;
  for (std::uint32_t frame = 1; frame <= 200; ++frame) {
    poller.arm(slots_of(words.data(), 2), frame, monotonic_raw_ns() + kMinute);
    ASSERT_TRUE(poller.wait_until_polling(monotonic_raw_ns() + kMinute));
    const std::int64_t released = monotonic_raw_ns();
    for (std::size_t slot = 0; slot < 2; ++slot) {
      store(&words[slot * kStride], frame);
      store(&words[slot * kStride + 1], frame);
    }
    const PollResult r = poller.wait();
    ASSERT_FALSE(r.timed_out) << "frame " << frame;
    for (std::size_t slot = 0; slot < 2; ++slot) {
      ASSERT_TRUE(r.start_ns[slot] && r.end_ns[slot]);
      EXPECT_GE(*r.start_ns[slot], released) << "frame " << frame << ": a stamp of a frame before";
    }
    if (frame == 1) thread_id = r.thread_id;
    EXPECT_EQ(r.thread_id, thread_id) << "frame " << frame;
  }
#if defined(__linux__)
  EXPECT_NE(thread_id, 0);
  EXPECT_NE(thread_id, current_thread_id());
#endif
  EXPECT_EQ(poller.thread_id(), thread_id);
}

// Destroyed while armed, an hour before its deadline: the destructor ends the poll and joins.
TEST(StampPollerThread, ShutsDownWhileArmed) {
  alignas(64) std::array<std::uint32_t, kStride> words{};
  auto poller = std::make_unique<StampPoller>();
  poller->arm(slots_of(words.data(), 1), 1, monotonic_raw_ns() + 60 * kMinute);
  ASSERT_TRUE(poller->wait_until_polling(monotonic_raw_ns() + kMinute));
  const std::int64_t before = monotonic_raw_ns();
  poller.reset();
  EXPECT_LT(monotonic_raw_ns() - before, 10 * kMinute) << "the destructor waited for the deadline";
}

// A polling thread that does not come back a second past its deadline (a test hook holds it, as
// an OS could keep it off every CPU) is taken for stuck: wait() returns every stamp missing, and
// the frames after are refused at once, never waited on.
TEST(StampPollerThread, AStuckThreadIsGivenUpOnPastItsDeadline) {
  alignas(64) std::array<std::uint32_t, kStride> words{};
  std::atomic<bool> hold{true};
  StampPoller poller;
  poller.set_pass_hook([&] {
    while (hold.load()) std::this_thread::yield();  // the test's starved thread
  });
  poller.arm(slots_of(words.data(), 1), 1, monotonic_raw_ns() + 10'000'000);
  store(&words[0], 1);
  store(&words[1], 1);
  const PollResult stuck = poller.wait();
  EXPECT_TRUE(stuck.timed_out);
  EXPECT_TRUE(stuck.waited_for_poller);
  ASSERT_EQ(stuck.start_ns.size(), 1u);
  EXPECT_FALSE(stuck.start_ns[0] || stuck.end_ns[0]);
  const std::int64_t before = monotonic_raw_ns();
  poller.arm(slots_of(words.data(), 1), 2, monotonic_raw_ns() + 60 * kMinute);
  EXPECT_FALSE(poller.wait_until_polling(monotonic_raw_ns() + 60 * kMinute));
  const PollResult refused = poller.wait();
  EXPECT_TRUE(refused.timed_out);
  EXPECT_LT(monotonic_raw_ns() - before, kMinute) << "a refused frame was waited for";
  hold.store(false);  // the destructor joins the thread once it lets go
}

// Between frames the thread sleeps: arm() wakes it (one futex wake, reported), and the
// poll's result says how long the thread took to start.
TEST(StampPollerThread, ReportsTheWakeOfASleepingThread) {
  alignas(64) std::array<std::uint32_t, kStride> words{};
  StampPoller poller;
  bool woke = false;
  for (std::uint32_t frame = 1; frame <= 100 && !woke; ++frame) {
    // Busy for a while (no sleep: this thread stays runnable) so that the poller has gone
    // back to sleep by the next arm().
    const std::int64_t until = monotonic_raw_ns() + 2'000'000;
    while (monotonic_raw_ns() < until) {
    }
    poller.arm(slots_of(words.data(), 1), frame, monotonic_raw_ns() + kMinute);
    store(&words[0], frame);
    store(&words[1], frame);
    const PollResult r = poller.wait();
    ASSERT_FALSE(r.timed_out);
    EXPECT_GE(r.wake_latency_ns, 0);
    woke = r.woke_poller;
  }
  EXPECT_TRUE(woke) << "arm() never found the poller asleep";
}

}  // namespace poller_thread_test
}  // namespace gpuoverlap
