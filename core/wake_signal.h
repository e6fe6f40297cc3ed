// A counter that one thread raises and another waits for, the only hand-over between the frame
// loop and the stamp poller while frames are measured. A wait spins for nothing and takes no
// lock: it sleeps in the kernel (Linux: a private futex on the counter; Windows: an auto-reset
// event) until the counter moves past the value the waiter saw, or its deadline passes. A
// raise makes a system call only when a waiter may be asleep, so a waiter that comes after
// the raise (the usual case: the poller is done before the GPU wait returns) costs none.
//
// Contract: at most one thread waits at a time; any thread may raise.
#pragma once

#include <atomic>
#include <cstdint>

namespace gpuoverlap {

class WakeSignal {
 public:
  WakeSignal();
  WakeSignal(const WakeSignal&) = delete;
  WakeSignal& operator=(const WakeSignal&) = delete;
  ~WakeSignal();

  std::uint32_t value() const { return value_.load(std::memory_order_acquire); }

  // Moves the counter on (release: what the raiser wrote before is visible to a waiter that
  // sees the new value) and wakes the waiter if it sleeps. Returns whether a wake-up was sent.
  bool raise();

  // Returns once value() != seen (true), or at deadline_ns on CLOCK_MONOTONIC_RAW (false).
  bool wait_past(std::uint32_t seen, std::int64_t deadline_ns);

 private:
  std::atomic<std::uint32_t> value_{0};
  std::atomic<std::uint32_t> sleeping_{0};  // the waiter is in, or about to enter, the kernel
#if defined(_WIN32)
  void* event_ = nullptr;  // HANDLE
#endif
};

// A word several threads sleep on (a job system's workers): sleep_while returns once `word`
// no longer holds `seen` (or spuriously: callers loop), wake_one/wake_all wake sleepers after
// the word changed. Linux: a futex, straight away. Not std::atomic::wait: libstdc++ 12's first
// spins and then calls sched_yield four times, and a yield hands the CPU to any runnable thread
// on that CPU, an idle-priority one included, until the next tick. Windows: std::atomic::wait.
void sleep_while(std::atomic<std::uint32_t>& word, std::uint32_t seen);
// The same, for at most `timeout_ns` (every wait has a deadline). Windows: a poll of 1 ms sleeps,
// bounded by the timeout (std::atomic::wait has none).
void sleep_while_for(std::atomic<std::uint32_t>& word, std::uint32_t seen, std::int64_t timeout_ns);
void wake_one(std::atomic<std::uint32_t>& word);
void wake_all(std::atomic<std::uint32_t>& word);

}  // namespace gpuoverlap
