#include "queues/stamp_poller.h"

#include <algorithm>

#include "core/clock.h"
#include "queues/settling_spin.h"

namespace gpuoverlap {

StampPoller::~StampPoller() {
  if (thread_.joinable()) {
    deadline_ns_.store(0, std::memory_order_relaxed);
    thread_.join();
  }
}

void StampPoller::arm(const std::uint32_t* base, std::size_t stride_words, std::size_t slot_count,
                      std::uint32_t frame, std::int64_t deadline_ns) {
  result_ = PollResult{};
  result_.start_ns.assign(slot_count, std::nullopt);
  result_.end_ns.assign(slot_count, std::nullopt);
  deadline_ns_.store(deadline_ns, std::memory_order_relaxed);
  spinning_.store(false, std::memory_order_relaxed);
  thread_ = std::thread([=, this] { poll_loop(base, stride_words, slot_count, frame); });
  while (!spinning_.load(std::memory_order_acquire)) std::this_thread::yield();
}

void StampPoller::shorten_deadline(std::int64_t deadline_ns) {
  std::int64_t current = deadline_ns_.load(std::memory_order_relaxed);
  while (deadline_ns < current &&
         !deadline_ns_.compare_exchange_weak(current, deadline_ns, std::memory_order_relaxed)) {
  }
}

PollResult StampPoller::wait() {
  thread_.join();
  return std::move(result_);
}

void StampPoller::poll_loop(const std::uint32_t* base, std::size_t stride_words,
                            std::size_t slot_count, std::uint32_t frame) {
  std::size_t missing = slot_count * 2;
  spinning_.store(true, std::memory_order_release);
  // Hot loop (queues/settling_spin.h): one acquire load per missing word, one clock read only
  // when something changed (and every 64 rounds for the deadline), so detection latency is a
  // few loads.
  auto scan = [&]() {
    bool changed = false;
    for (std::size_t slot = 0; slot < slot_count; ++slot) {
      const std::uint32_t* words = base + slot * stride_words;
      if (!result_.start_ns[slot] && __atomic_load_n(&words[0], __ATOMIC_ACQUIRE) == frame) {
        result_.start_ns[slot] = 0;  // seen; timed below
        changed = true;
      }
      if (!result_.end_ns[slot] && __atomic_load_n(&words[1], __ATOMIC_ACQUIRE) == frame) {
        result_.end_ns[slot] = 0;
        changed = true;
      }
    }
    return changed;
  };
  auto time_new_stamps = [&](std::int64_t now_ns) {
    for (std::size_t slot = 0; slot < slot_count; ++slot) {
      for (auto* stamp : {&result_.start_ns[slot], &result_.end_ns[slot]}) {
        if (stamp->has_value() && **stamp == 0) {
          **stamp = now_ns;
          --missing;
        }
      }
    }
  };
  result_.max_check_gap_ns = spin_until_settled(
      scan, time_new_stamps, [&] { return missing == 0; },
      [&](std::int64_t now_ns) { return now_ns > deadline_ns_.load(std::memory_order_relaxed); });
  result_.timed_out = missing > 0;
}

}  // namespace gpuoverlap
