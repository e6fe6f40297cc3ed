#include "queues/stamp_poller.h"

#include <algorithm>

#include "core/clock.h"
#include "core/cpu_affinity.h"
#include "core/cpu_relax.h"
#include "core/thread_policy.h"
#include "queues/settling_spin.h"

namespace gpuoverlap {

namespace {

// How long the thread sleeps between frames before it looks at `stopping_` again: a bound on
// the wait, not a poll (arm() and the destructor both wake it).
constexpr std::int64_t kIdleWaitNs = 1'000'000'000;
// How long wait() sleeps past the poll's own deadline before it takes the thread for stuck.
constexpr std::int64_t kStuckAfterNs = 1'000'000'000;

// A result of `slots` slots with nothing seen, timed out.
PollResult nothing_seen(std::size_t slots) {
  PollResult r;
  r.start_ns.assign(slots, std::nullopt);
  r.end_ns.assign(slots, std::nullopt);
  r.start_window_ns.assign(slots, 0);
  r.end_window_ns.assign(slots, 0);
  r.timed_out = true;
  return r;
}

}  // namespace

StampPoller::StampPoller(PollerPlacement placement)
    : placement_(placement), thread_([this] { thread_main(); }) {}

StampPoller::~StampPoller() {
  stopping_.store(true, std::memory_order_seq_cst);
  deadline_ns_.store(0, std::memory_order_relaxed);
  requested_.raise();
  thread_.join();
}

void StampPoller::arm(std::span<const std::uint32_t* const> slots, std::uint32_t frame,
                      std::int64_t deadline_ns) {
  finished_seen_ = finished_.value();
  if (stuck_) return;  // refused: wait_until_polling and wait() answer at once
  slots_.assign(slots.begin(), slots.end());  // the same size every frame: no allocation
  frame_ = frame;
  armed_ns_ = monotonic_raw_ns();
  deadline_ns_.store(deadline_ns, std::memory_order_relaxed);
  woke_ = requested_.raise();
}

bool StampPoller::wait_until_polling(std::int64_t deadline_ns) const {
  if (stuck_) return false;
  while (polling_frame_.load(std::memory_order_acquire) != frame_) {
    if (monotonic_raw_ns() >= deadline_ns) return false;
    GPUOVERLAP_CPU_RELAX();
  }
  return true;
}

void StampPoller::shorten_deadline(std::int64_t deadline_ns) {
  std::int64_t current = deadline_ns_.load(std::memory_order_relaxed);
  while (deadline_ns < current &&
         !deadline_ns_.compare_exchange_weak(current, deadline_ns, std::memory_order_relaxed)) {
  }
}

PollResult StampPoller::wait() {
  if (stuck_) return nothing_seen(slots_.size());
  bool waited = false;
  if (finished_.value() == finished_seen_) {
    waited = true;
    const std::int64_t give_up_ns = deadline_ns_.load(std::memory_order_relaxed) + kStuckAfterNs;
    if (!finished_.wait_past(finished_seen_, give_up_ns)) {
      // The thread has not come back a second past its deadline: a poller the OS keeps off
      // every CPU. Its result cannot be read while it may still write it.
      stuck_ = true;
      PollResult r = nothing_seen(slots_.size());
      r.thread_id = thread_id();
      r.woke_poller = woke_;
      r.waited_for_poller = true;
      return r;
    }
  }
  PollResult r = std::move(result_);
  r.woke_poller = woke_;
  r.waited_for_poller = waited;
  return r;
}

void StampPoller::thread_main() {
  name_this_thread("poller");
  apply_placement(placement_);  // what a run gets was read back once, at its start
  own_schedstat_ = SchedstatFile::of_calling_thread();
  if (const auto a = own_schedstat_.read()) run_delay_at_last_end_ns_ = a->run_delay_ns;
  thread_id_.store(current_thread_id(), std::memory_order_release);
  std::uint32_t requests_seen = 0;
  while (!stopping_.load(std::memory_order_acquire)) {
    if (!requested_.wait_past(requests_seen, monotonic_raw_ns() + kIdleWaitNs)) continue;
    requests_seen = requested_.value();
    if (stopping_.load(std::memory_order_acquire)) break;
    poll_frame();
    finished_.raise();
  }
}

void StampPoller::poll_frame() {
  const std::size_t slot_count = slots_.size();
  const std::uint32_t frame = frame_;
  result_ = PollResult{};
  result_.start_ns.assign(slot_count, std::nullopt);
  result_.end_ns.assign(slot_count, std::nullopt);
  result_.start_window_ns.assign(slot_count, 0);
  result_.end_window_ns.assign(slot_count, 0);
  result_.thread_id = thread_id_.load(std::memory_order_relaxed);
  std::size_t missing = slot_count * 2;
  // Seen, not yet timed: the window's start is kept here until the time is known.
  std::vector<std::int64_t>& start_old_since = start_old_since_;
  std::vector<std::int64_t>& end_old_since = end_old_since_;
  start_old_since.resize(slot_count);  // the same size every frame: allocated once
  end_old_since.resize(slot_count);
  result_.wake_latency_ns = monotonic_raw_ns() - armed_ns_;
  polling_frame_.store(frame, std::memory_order_release);
  // Hot loop (queues/settling_spin.h): one acquire load per missing word and one clock read per
  // pass, so detection latency is a few loads.
  auto scan = [&](std::int64_t old_since_ns) {
    if (pass_hook_) pass_hook_();
    bool changed = false;
    for (std::size_t slot = 0; slot < slot_count; ++slot) {
      const std::uint32_t* words = slots_[slot];
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
  // The first pass's window starts at arm(): the words held their old values then, since the
  // GPU work is released after it.
  const SpinStats stats = spin_until_settled(
      scan, time_new_stamps, [&] { return missing == 0; },
      [&](std::int64_t now_ns) { return now_ns > deadline_ns_.load(std::memory_order_relaxed); },
      armed_ns_);
  result_.scans = stats.scans;
  result_.max_scan_gap_ns = stats.max_scan_gap_ns;
  result_.cpu = current_cpu();
  // From the end of the poll before to now: this frame's wake-up and spin.
  if (const auto a = own_schedstat_.read(); a && run_delay_at_last_end_ns_) {
    result_.run_delay_ns = *a->run_delay_ns - *run_delay_at_last_end_ns_;
    run_delay_at_last_end_ns_ = a->run_delay_ns;
  }
  result_.timed_out = missing > 0;
}

}  // namespace gpuoverlap
