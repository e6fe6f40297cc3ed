#include "queues/sequence_poller.h"

#include <algorithm>

#include "core/clock.h"
#include "queues/settling_spin.h"

namespace gpuoverlap {

SequencePoller::~SequencePoller() {
  if (thread_.joinable()) {
    stop_.store(true, std::memory_order_relaxed);
    thread_.join();
  }
}

void SequencePoller::start(std::vector<Word> words, std::size_t capacity,
                           PollerPlacement placement) {
  placement_ = placement;
  words_ = std::move(words);
  events_.clear();
  events_.reserve(capacity);  // no allocation while spinning
  capacity_ = capacity;
  overflowed_ = false;
  max_scan_gap_ns_ = 0;
  scans_ = 0;
  found_.store(0, std::memory_order_relaxed);
  stop_.store(false, std::memory_order_relaxed);
  spinning_.store(false, std::memory_order_relaxed);
  thread_ = std::thread([this] { poll_loop(); });
  while (!spinning_.load(std::memory_order_acquire)) std::this_thread::yield();
}

std::vector<SequenceEvent> SequencePoller::stop() {
  stop_.store(true, std::memory_order_relaxed);
  thread_.join();
  return std::move(events_);
}

void SequencePoller::poll_loop() {
  apply_placement(placement_);  // what a run gets was read back once, at its start
  std::vector<std::uint32_t> last(words_.size());
  const std::int64_t started_ns = monotonic_raw_ns();
  GPUOVERLAP_LOADS_AFTER_CLOCK();  // the starting values are read after the windows' start
  for (std::size_t i = 0; i < words_.size(); ++i)
    last[i] = __atomic_load_n(words_[i].address, __ATOMIC_ACQUIRE);
  spinning_.store(true, std::memory_order_release);
  // New numbers are collected untimed, and everything a settled scan found gets one time
  // (queues/settling_spin.h says why).
  std::vector<SequenceEvent> pending;
  auto scan = [&](std::int64_t old_since_ns) {
    bool changed = false;
    for (std::size_t i = 0; i < words_.size(); ++i) {
      const std::uint32_t value = __atomic_load_n(words_[i].address, __ATOMIC_ACQUIRE);
      if (value == last[i]) continue;
      last[i] = value;
      changed = true;
      // seen_ns holds the window's start until the event is timed.
      SequenceEvent e{static_cast<std::uint32_t>(i), value, old_since_ns, 0, 0};
      // The GPU writes the clock pair before the number (perlin.hlsl, write_stamp), so after
      // the acquire above it holds this number's clock, unless the next one already arrived.
      if (const std::uint32_t* clock = words_[i].clock)
        e.clock_ticks = std::uint64_t{__atomic_load_n(clock, __ATOMIC_RELAXED)} |
                        std::uint64_t{__atomic_load_n(clock + 1, __ATOMIC_RELAXED)} << 32;
      pending.push_back(e);
    }
    return changed;
  };
  auto time_found = [&](std::int64_t now_ns) {
    for (SequenceEvent& e : pending) {
      e.window_ns = now_ns - e.seen_ns;
      e.seen_ns = now_ns;
      if (events_.size() < capacity_)
        events_.push_back(e);
      else
        overflowed_ = true;
    }
    found_.fetch_add(pending.size(), std::memory_order_release);
    pending.clear();
  };
  pending.reserve(words_.size() * 4);
  const SpinStats stats = spin_until_settled(
      scan, time_found, [] { return false; },
      [&](std::int64_t) { return stop_.load(std::memory_order_relaxed); }, started_ns);
  max_scan_gap_ns_ = stats.max_scan_gap_ns;
  scans_ = stats.scans;
}

}  // namespace gpuoverlap
