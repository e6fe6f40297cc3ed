#include "queues/stamp_poller.h"

#include <algorithm>

#include "core/clock.h"
#include "core/cpu_affinity.h"
#include "core/thread_accounting.h"
#include "queues/settling_spin.h"

namespace gpuoverlap {

StampPoller::~StampPoller() {
  if (thread_.joinable()) {
    deadline_ns_.store(0, std::memory_order_relaxed);
    thread_.join();
  }
}

void StampPoller::arm(std::vector<const std::uint32_t*> slots, std::uint32_t frame,
                      std::int64_t deadline_ns) {
  const std::size_t slot_count = slots.size();
  result_ = PollResult{};
  result_.start_ns.assign(slot_count, std::nullopt);
  result_.end_ns.assign(slot_count, std::nullopt);
  result_.start_window_ns.assign(slot_count, 0);
  result_.end_window_ns.assign(slot_count, 0);
  deadline_ns_.store(deadline_ns, std::memory_order_relaxed);
  spinning_.store(false, std::memory_order_relaxed);
  thread_ = std::thread([this, slots = std::move(slots), frame] { poll_loop(slots, frame); });
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

void StampPoller::poll_loop(const std::vector<const std::uint32_t*>& slots, std::uint32_t frame) {
  const std::size_t slot_count = slots.size();
  apply_placement(placement_);  // what a run gets was read back once, at its start
  std::size_t missing = slot_count * 2;
  // Seen, not yet timed: the window's start is kept here until the time is known.
  std::vector<std::int64_t> start_old_since(slot_count), end_old_since(slot_count);
  const std::int64_t started_ns = monotonic_raw_ns();
  spinning_.store(true, std::memory_order_release);
  // Hot loop (queues/settling_spin.h): one acquire load per missing word and one clock read per
  // pass, so detection latency is a few loads.
  auto scan = [&](std::int64_t old_since_ns) {
    if (pass_hook_) pass_hook_();
    bool changed = false;
    for (std::size_t slot = 0; slot < slot_count; ++slot) {
      const std::uint32_t* words = slots[slot];
      if (!result_.start_ns[slot] && __atomic_load_n(&words[0], __ATOMIC_ACQUIRE) == frame) {
        result_.start_ns[slot] = 0;  // seen; timed below
        start_old_since[slot] = old_since_ns;
        changed = true;
      }
      if (!result_.end_ns[slot] && __atomic_load_n(&words[1], __ATOMIC_ACQUIRE) == frame) {
        result_.end_ns[slot] = 0;
        end_old_since[slot] = old_since_ns;
        changed = true;
      }
    }
    return changed;
  };
  auto time_new_stamps = [&](std::int64_t now_ns) {
    for (std::size_t slot = 0; slot < slot_count; ++slot) {
      if (result_.start_ns[slot] == 0) {
        result_.start_ns[slot] = now_ns;
        result_.start_window_ns[slot] = now_ns - start_old_since[slot];
        --missing;
      }
      if (result_.end_ns[slot] == 0) {
        result_.end_ns[slot] = now_ns;
        result_.end_window_ns[slot] = now_ns - end_old_since[slot];
        --missing;
      }
    }
  };
  const SpinStats stats = spin_until_settled(
      scan, time_new_stamps, [&] { return missing == 0; },
      [&](std::int64_t now_ns) { return now_ns > deadline_ns_.load(std::memory_order_relaxed); },
      started_ns);
  result_.scans = stats.scans;
  result_.max_scan_gap_ns = stats.max_scan_gap_ns;
  result_.cpu = current_cpu();
  // The thread is started per frame (arm), so its totals are this poll's: one read, after the
  // stamps, none before the release waits on `spinning_`.
  result_.run_delay_ns = read_thread_accounting().run_delay_ns;
  result_.timed_out = missing > 0;
}

}  // namespace gpuoverlap
