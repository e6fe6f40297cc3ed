// The skeleton both stamp pollers share (stamp_poller.cpp for frames, sequence_poller.cpp
// for continuous submissions): spin on a scan of the stamp words; when a scan finds something
// new, scan again until a whole pass finds nothing (settle), then time everything found at
// once; every 64 rounds read the clock, track the longest pause between two such checks, and
// ask whether to stop; on stopping, take one last look.
//
// Why settle: a scan can be descheduled midway, so words read early in it may predate a later
// word's change by that pause (a producer's end read as "not yet" before the pause, its
// consumer's start read as new after it). Re-reading every word after the last change seen
// means a cause is never timed after its effect: they share the time.
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/clock.h"
#include "core/cpu_relax.h"

namespace gpuoverlap {

// `scan()`: one pass over the words; true when it found something new (kept untimed).
// `time_found(now_ns)`: times what the passes since the last call found.
// `done()`: checked every round: nothing is left to find.
// `should_stop(now_ns)`: checked every 64 rounds.
// Returns the longest interval between two checks, in ns.
template <class Scan, class TimeFound, class Done, class ShouldStop>
std::int64_t spin_until_settled(Scan&& scan, TimeFound&& time_found, Done&& done,
                                ShouldStop&& should_stop) {
  auto look = [&] {
    if (!scan()) return;
    while (scan()) {
    }
    time_found(monotonic_raw_ns());
  };
  std::int64_t last_check_ns = monotonic_raw_ns();
  std::int64_t max_check_gap_ns = 0;
  for (std::uint32_t round = 0; !done(); ++round) {
    look();
    if ((round & 63u) != 0) {
      GPUOVERLAP_CPU_RELAX();
      continue;
    }
    const std::int64_t now_ns = monotonic_raw_ns();
    max_check_gap_ns = std::max(max_check_gap_ns, now_ns - last_check_ns);
    last_check_ns = now_ns;
    if (should_stop(now_ns)) {
      // One last look: the stop may have come while this thread was not scheduled (a loaded
      // machine), with stamps already in memory. They are timed now, late.
      look();
      break;
    }
    GPUOVERLAP_CPU_RELAX();
  }
  return max_check_gap_ns;
}

}  // namespace gpuoverlap
