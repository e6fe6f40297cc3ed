// The CPU side of the stamp protocol (workloads/perlin.hlsl): a thread that spins on the
// start/end words of every workload slot and records CLOCK_MONOTONIC_RAW when each word first
// equals the frame number, with the window in which it changed. Each arm() starts a thread,
// placed as the constructor's PollerPlacement asks. API neutral: it reads plain memory (mapped by a
// backend, or a test buffer written by another thread).
//
// Contract: every word is only ever written with atomic stores (GPU atomics or __atomic_store
// in tests), and the memory stays mapped until wait() returns.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <thread>
#include <vector>

#include "queues/poller_placement.h"

namespace gpuoverlap {

struct PollResult {
  std::vector<std::optional<std::int64_t>> start_ns;  // per slot, CLOCK_MONOTONIC_RAW
  std::vector<std::optional<std::int64_t>> end_ns;
  // Per stamp seen, its detection window (settling_spin.h): the stamp was written within this
  // many ns before its time above. 0 for a stamp not seen.
  std::vector<std::int64_t> start_window_ns, end_window_ns;
  bool timed_out = false;  // the deadline passed with some stamp still missing
  // The passes over the stamps and the longest interval between the starts of two of them:
  // when the thread was descheduled or starved, a stamp could have waited this long to be seen.
  std::uint64_t scans = 0;
  std::int64_t max_scan_gap_ns = 0;
  int cpu = -1;  // the CPU the thread ran on when it finished (-1: unknown)
  // What the scheduler did to the polling thread, started for this frame, over its life
  // (core/thread_accounting.h): time runnable but not running, the part of its spin it was kept
  // off a CPU (Linux only).
  std::optional<std::int64_t> run_delay_ns;
};

class StampPoller {
 public:
  StampPoller() = default;
  explicit StampPoller(PollerPlacement placement) : placement_(placement) {}
  StampPoller(const StampPoller&) = delete;
  StampPoller& operator=(const StampPoller&) = delete;
  ~StampPoller();

  // Starts the polling thread and returns once it is spinning, so the caller can release the
  // GPU work knowing no stamp can be missed. Slot s has its start word at slots[s] and its
  // end word right after it. The thread gives up at deadline_ns (CLOCK_MONOTONIC_RAW).
  // Contract: not armed already.
  void arm(std::vector<const std::uint32_t*> slots, std::uint32_t frame, std::int64_t deadline_ns);

  // Moves the deadline (e.g. once the GPU reported the frame complete, stamps still missing
  // will never come). Safe to call while the thread runs.
  void shorten_deadline(std::int64_t deadline_ns);

  // Joins the thread. Contract: armed.
  PollResult wait();

  // Test hook: called by the polling thread at the start of every pass over the words, after
  // the pass's clock read (a test stops the poller there to play a preempted thread). Set
  // before arm(). Empty in the product.
  void set_pass_hook(std::function<void()> hook) { pass_hook_ = std::move(hook); }

 private:
  void poll_loop(const std::vector<const std::uint32_t*>& slots, std::uint32_t frame);

  PollerPlacement placement_;
  std::function<void()> pass_hook_;
  std::thread thread_;
  std::atomic<bool> spinning_{false};
  std::atomic<std::int64_t> deadline_ns_{0};
  PollResult result_;
};

}  // namespace gpuoverlap
