#pragma once
// Where the frame loop's thread spent one frame interval (one frame's start to the next's), so
// that a late frame is explained by the thread that starts frames, not guessed at.
//
// Contract: the thread is always in exactly one phase, and a phase's time is the span from
// entering it to entering the next, all read from one clock (CLOCK_MONOTONIC_RAW) in order.
// The phases of an interval therefore add up to it exactly: nothing is measured twice or left
// out. A phase entered at a time before the current one's start (a pace target already past)
// takes no time; its successor starts where the current one did.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

namespace gpuoverlap {

enum class LoopPhase : std::uint8_t {
  jobs,       // waiting for the frame's CPU jobs ([cpu]) after releasing them
  submit,     // recording and submitting the frame's command buffers
  tool,       // the tool's own work: clock calibration, arming and reading the poller, records
  gpu_wait,   // releasing the frame's gate and waiting for its GPU work
  pace,       // asleep (then spinning) until the pace's next frame start, as asked
  woke_late,  // from that start (or from the call, when it was already past) to the release
};
inline constexpr std::size_t kLoopPhaseCount = 6;

struct LoopPhaseTimes {
  std::array<std::int64_t, kLoopPhaseCount> ns{};
  std::int64_t at(LoopPhase phase) const { return ns[static_cast<std::size_t>(phase)]; }
  std::int64_t total_ns() const;
};

class LoopPhaseClock {
 public:
  // The thread enters `phase` at `now_ns`: the current phase ends there.
  void enter(LoopPhase phase, std::int64_t now_ns);
  // A frame starts at `start_ns` (its release): the current phase ends there, the interval
  // since the previous start closes and is returned (empty at the first start), and `phase`
  // begins.
  std::optional<LoopPhaseTimes> frame_started(std::int64_t start_ns, LoopPhase phase);

 private:
  std::optional<std::int64_t> interval_start_ns_;
  LoopPhase current_ = LoopPhase::tool;
  std::int64_t entered_ns_ = 0;
  LoopPhaseTimes open_;
};

}  // namespace gpuoverlap
