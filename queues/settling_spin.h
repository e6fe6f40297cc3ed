// The skeleton both stamp pollers share (stamp_poller.cpp for frames, sequence_poller.cpp
// for continuous submissions): spin on a scan of the stamp words; when a scan finds something
// new, scan again until a whole pass finds nothing (settle), then time everything found at
// once; every 64 rounds ask whether to stop; on stopping, take one last look.
//
// Why settle: a scan can be descheduled midway, so words read early in it may predate a later
// word's change by that pause (a producer's end read as "not yet" before the pause, its
// consumer's start read as new after it). Re-reading every word after the last change seen
// means a cause is never timed after its effect: they share the time.
//
// The detection window: every pass reads the clock before it reads the words, so a word first
// seen new in pass P was seen old in pass P-1, which began at `old_since_ns`: its write
// happened inside [old_since_ns, the time it is timed with]. A pass that the scheduler
// interrupts (a preempted poller, a host that steals the CPU) widens exactly the windows of the
// words it finds, so each stamp says how far it can be trusted.
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/clock.h"
#include "core/cpu_relax.h"

namespace gpuoverlap {

// What the spin saw of its own running: how many passes it made and the longest interval
// between the starts of two consecutive passes (ns), the worst delay a stamp could have
// waited to be seen because this thread was not running.
struct SpinStats {
  std::uint64_t scans = 0;
  std::int64_t max_scan_gap_ns = 0;
};

// `scan(old_since_ns)`: one pass over the words; true when it found something new (kept
// untimed), each with `old_since_ns` as the start of its detection window.
// `time_found(now_ns)`: times what the passes since the last call found.
// `done()`: checked every round: nothing is left to find.
// `should_stop(now_ns)`: checked every 64 rounds.
// `started_ns`: when the words were last known to hold their old values (the first pass's
// `old_since_ns`).
template <class Scan, class TimeFound, class Done, class ShouldStop>
SpinStats spin_until_settled(Scan&& scan, TimeFound&& time_found, Done&& done,
                             ShouldStop&& should_stop, std::int64_t started_ns) {
  SpinStats stats;
  std::int64_t previous_pass_ns = started_ns;  // the start of the pass before the next one
  std::int64_t last_pass_ns = started_ns;
  auto pass = [&] {
    const std::int64_t start_ns = monotonic_raw_ns();
    GPUOVERLAP_LOADS_AFTER_CLOCK();  // the pass's loads come after its time
    ++stats.scans;
    stats.max_scan_gap_ns = std::max(stats.max_scan_gap_ns, start_ns - last_pass_ns);
    last_pass_ns = start_ns;
    const bool found = scan(previous_pass_ns);
    previous_pass_ns = start_ns;
    return found;
  };
  auto look = [&] {
    if (!pass()) return;
    while (pass()) {
    }
    time_found(monotonic_raw_ns());
  };
  for (std::uint32_t round = 0; !done(); ++round) {
    look();
    if ((round & 63u) != 0) {
      GPUOVERLAP_CPU_RELAX();
      continue;
    }
    if (should_stop(last_pass_ns)) {
      // One last look: the stop may have come while this thread was not scheduled (a loaded
      // machine), with stamps already in memory. They are timed now, late, and their windows
      // say so.
      look();
      break;
    }
    GPUOVERLAP_CPU_RELAX();
  }
  return stats;
}

}  // namespace gpuoverlap
