// The CPU side of the stamp protocol for work submitted continuously rather than in frames
// (preemption): a thread spins on a set of stamp words, each of which is only ever written
// with ever-increasing submission numbers, and records when each new number was first seen,
// with the shader-clock words that the GPU writes just before it. API neutral: it reads plain
// memory (mapped by a backend, or a test buffer written by another thread).
//
// Contract: words change only by atomic stores; a number stays in its word at least as long
// as one scan takes (a microsecond), else the poller records a later number and the missed
// one has no time (it never invents one); the memory stays mapped until stop() returns.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

#include "queues/poller_placement.h"

namespace gpuoverlap {

struct SequenceEvent {
  std::uint32_t word = 0;    // index into the watched words
  std::uint32_t value = 0;   // the new number
  std::int64_t seen_ns = 0;  // CLOCK_MONOTONIC_RAW when first seen
  // The detection window (settling_spin.h): the number was written within this many ns
  // before seen_ns.
  std::int64_t window_ns = 0;
  std::uint64_t clock_ticks = 0;  // the word's clock pair (lo, hi) read right after; 0 if none
};

class SequencePoller {
 public:
  struct Word {
    const std::uint32_t* address = nullptr;
    const std::uint32_t* clock = nullptr;  // two words (lo, hi); nullptr: none
  };

  SequencePoller() = default;
  SequencePoller(const SequencePoller&) = delete;
  SequencePoller& operator=(const SequencePoller&) = delete;
  ~SequencePoller();

  // Starts the thread and returns once it spins (what the words hold now is the starting
  // point, not an event). At most `capacity` events are kept; more set overflowed().
  void start(std::vector<Word> words, std::size_t capacity, PollerPlacement placement = {});

  // Stops and joins the thread; returns the events in the order seen. Contract: started.
  std::vector<SequenceEvent> stop();

  bool overflowed() const { return overflowed_; }
  // The longest pause between the starts of two passes over the words: how late an event
  // could have been seen because the thread was descheduled. Read after stop().
  std::int64_t max_scan_gap_ns() const { return max_scan_gap_ns_; }
  std::uint64_t scans() const { return scans_; }
  // How many new numbers have been seen and timed so far (kept or dropped for capacity),
  // readable from any thread while polling: lets a writer wait until its number was seen
  // instead of guessing how long the poller may be descheduled.
  std::uint64_t found() const { return found_.load(std::memory_order_acquire); }

 private:
  void poll_loop();

  std::vector<Word> words_;
  std::vector<SequenceEvent> events_;
  std::size_t capacity_ = 0;
  bool overflowed_ = false;
  std::int64_t max_scan_gap_ns_ = 0;
  std::uint64_t scans_ = 0;
  PollerPlacement placement_;
  std::thread thread_;
  std::atomic<bool> spinning_{false};
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> found_{0};
};

}  // namespace gpuoverlap
