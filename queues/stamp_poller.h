// The CPU side of the stamp protocol (workloads/perlin.hlsl): a thread that spins on the
// start/end words of every workload slot and records CLOCK_MONOTONIC_RAW when each word first
// equals the frame number, with the window in which it changed. API neutral: it reads plain
// memory (mapped by a backend, or a test buffer written by another thread).
//
// One thread for the poller's life (a scenario's frames), started and placed once by the
// constructor, asleep between frames. What the frame loop does per frame for it, and nothing
// else: arm() writes the frame's request and raises a WakeSignal (one futex wake when the
// thread sleeps, as it does between frames), wait_until_polling() spins on a flag (never yields
// or sleeps), and wait() reads the result, sleeping on a second WakeSignal only when the poll
// has not ended yet. No thread is created or ended, no lock is shared and nothing is read from
// /proc by the frame loop while frames are measured (the poller reads its own schedstat
// through a file opened once). PollResult says, per frame, which of these reschedule points
// the frame loop met.
//
// Contract: every word is only ever written with atomic stores (GPU atomics or __atomic_store
// in tests), and the memory stays mapped until wait() returns. One thread calls arm, wait and
// wait_until_polling; shorten_deadline may come from any thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include "core/thread_accounting.h"
#include "core/wake_signal.h"
#include "queues/poller_placement.h"

namespace gpuoverlap {

struct PollResult {
  std::vector<std::optional<std::int64_t>> start_ns;  // per slot, CLOCK_MONOTONIC_RAW
  std::vector<std::optional<std::int64_t>> end_ns;
  // Per stamp seen, its detection window (settling_spin.h): the stamp was written within this
  // many ns before its time above. 0 for a stamp not seen.
  std::vector<std::int64_t> start_window_ns, end_window_ns;
  bool timed_out = false;  // the deadline passed with some stamp still missing
  // The passes over the stamps and the longest interval between the starts of two of them
  // (the first counted from arm()): when the thread was descheduled, slow to wake or starved,
  // a stamp could have waited this long to be seen.
  std::uint64_t scans = 0;
  std::int64_t max_scan_gap_ns = 0;
  int cpu = -1;  // the CPU the thread ran on when it finished (-1: unknown)
  // What the scheduler did to the polling thread from the end of the frame before's poll to
  // the end of this one (core/thread_accounting.h): time runnable but not running, its wake-up
  // included (Linux only).
  std::optional<std::int64_t> run_delay_ns;
  // The polling thread's OS id: the same in every frame of a poller (one thread, not one per
  // frame). 0 where unknown.
  std::int64_t thread_id = 0;
  // The frame loop's reschedule points for the poller this frame: arm() woke the sleeping
  // thread (a futex wake), wait() slept until the poll ended (a futex wait).
  bool woke_poller = false;
  bool waited_for_poller = false;
  // From arm() to the thread's first pass over the words (ns): its wake-up latency.
  std::int64_t wake_latency_ns = 0;
};

class StampPoller {
 public:
  // Starts the polling thread, which places itself as `placement` asks (once: what the OS
  // granted was read back at the run's start) and sleeps until the first arm().
  explicit StampPoller(PollerPlacement placement = {});
  StampPoller(const StampPoller&) = delete;
  StampPoller& operator=(const StampPoller&) = delete;
  // Ends the poll in flight (its deadline set to now) and joins the thread.
  ~StampPoller();

  // Hands the thread one frame and wakes it; returns at once. Slot s has its start word at
  // slots[s] and its end word right after it. The poll gives up at deadline_ns
  // (CLOCK_MONOTONIC_RAW). A stamp's window starts no earlier than this call, so stamps
  // written before the thread's first pass (a thread slow to wake) are still timed honestly,
  // late, with windows that say so. Contract: not armed already (wait() came since the last).
  void arm(std::span<const std::uint32_t* const> slots, std::uint32_t frame,
           std::int64_t deadline_ns);

  // Spins (a PAUSE loop: no yield, no sleep, no system call) until the armed frame's first
  // pass has begun, or deadline_ns; true when it has. The frame loop calls it before it
  // releases the GPU, with a short deadline: it gives up rather than wait on a thread the
  // scheduler keeps off a CPU. Contract: armed.
  bool wait_until_polling(std::int64_t deadline_ns) const;

  // Moves the deadline (e.g. once the GPU reported the frame complete, stamps still missing
  // will never come). Safe to call from any thread while armed.
  void shorten_deadline(std::int64_t deadline_ns);

  // The poll's result, once it ended (every stamp seen, or its deadline passed). Sleeps only
  // if it has not ended yet, at most until its deadline and a second after it; past that the
  // thread is taken for stuck: every stamp still missing, timed_out, and the poller refuses
  // further frames (each arm()'s result timed out at once). Contract: armed.
  PollResult wait();

  // The polling thread's OS id (0 where unknown); constant over the poller's life.
  std::int64_t thread_id() const { return thread_id_.load(std::memory_order_acquire); }

  // Test hook: called by the polling thread at the start of every pass over the words, after
  // the pass's clock read (a test stops the poller there to play a preempted thread). Set
  // before arm(). Empty in the product.
  void set_pass_hook(std::function<void()> hook) { pass_hook_ = std::move(hook); }

 private:
  void thread_main();
  void poll_frame();

  PollerPlacement placement_;
  std::function<void()> pass_hook_;
  // The request, written by arm() before it raises `requested_`, read by the thread after.
  std::vector<const std::uint32_t*> slots_;
  std::uint32_t frame_ = 0;
  std::int64_t armed_ns_ = 0;
  std::atomic<std::int64_t> deadline_ns_{0};
  std::atomic<bool> stopping_{false};
  std::atomic<std::uint32_t> polling_frame_{0};  // the frame whose passes have begun
  WakeSignal requested_, finished_;
  std::uint32_t finished_seen_ = 0;  // finished_'s value when the frame was armed
  bool stuck_ = false;
  bool woke_ = false;
  PollResult result_;
  std::atomic<std::int64_t> thread_id_{0};
  SchedstatFile own_schedstat_;  // the polling thread's, opened by it
  std::optional<std::int64_t> run_delay_at_last_end_ns_;
  // The polling thread's: each seen word's window start until it is timed.
  std::vector<std::int64_t> start_old_since_, end_old_since_;
  std::thread thread_;  // last: started once everything above exists
};

}  // namespace gpuoverlap
