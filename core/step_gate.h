// Holds several threads in step: each party (a device's thread in `run --concurrent`) walks a
// rising sequence of steps and may take step s only once every other party still in has come
// to step s or past it, that is, has finished everything before s. Parties that take the same
// step run it together; a step that only one party takes runs while the others wait for it (a
// device measured alone, its neighbours idle).
//
// Thread safety: every member may be called from any thread; a party's own calls come from
// one thread at a time.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <mutex>
#include <vector>

namespace gpuoverlap {

class StepGate {
 public:
  explicit StepGate(std::size_t parties);

  enum class Arrival {
    in_step,     // every party still in had come to `step` or past it
    waited_out,  // the deadline passed first: the party goes on out of step
    stopped,     // should_stop said so first
  };

  // Party `party` is about to take `step` (greater than or equal to its last). Returns when every
  // other party still in has arrived at `step` or later, has left, or when `deadline` passes or
  // `should_stop` returns true (asked every `poll_interval`); the party counts as arrived either
  // way. Contract: party < parties.
  Arrival arrive(std::size_t party, std::uint64_t step,
                 std::chrono::steady_clock::time_point deadline,
                 const std::function<bool()>& should_stop = {},
                 std::chrono::milliseconds poll_interval = std::chrono::milliseconds(100));

  // Party `party` takes no more steps: no one waits for it any more (a device whose scenarios
  // are done, or that failed).
  void leave(std::size_t party);

 private:
  static constexpr std::uint64_t kLeft = std::numeric_limits<std::uint64_t>::max();
  bool others_at_or_past(std::size_t party, std::uint64_t step) const;  // mutex_ held

  std::mutex mutex_;
  std::condition_variable moved_;
  std::vector<std::uint64_t> position_;  // the step each party is about to take, or kLeft
};

}  // namespace gpuoverlap
