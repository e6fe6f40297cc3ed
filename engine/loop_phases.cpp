#include "engine/loop_phases.h"

#include <algorithm>
#include <numeric>

namespace gpuoverlap {

std::int64_t LoopPhaseTimes::total_ns() const {
  return std::accumulate(ns.begin(), ns.end(), std::int64_t{0});
}

void LoopPhaseClock::enter(LoopPhase phase, std::int64_t now_ns) {
  if (interval_start_ns_) {
    const std::int64_t end_ns = std::max(now_ns, entered_ns_);
    open_.ns[static_cast<std::size_t>(current_)] += end_ns - entered_ns_;
    entered_ns_ = end_ns;
  } else {
    entered_ns_ = now_ns;  // before the first frame: nothing is counted
  }
  current_ = phase;
}

std::optional<LoopPhaseTimes> LoopPhaseClock::frame_started(std::int64_t start_ns,
                                                            LoopPhase phase) {
  enter(phase, start_ns);
  std::optional<LoopPhaseTimes> closed;
  if (interval_start_ns_) closed = open_;
  open_ = LoopPhaseTimes{};
  interval_start_ns_ = entered_ns_ = std::max(start_ns, entered_ns_);
  return closed;
}

}  // namespace gpuoverlap
