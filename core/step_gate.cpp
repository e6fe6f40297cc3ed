#include "core/step_gate.h"

#include <algorithm>

namespace gpuoverlap {

StepGate::StepGate(std::size_t parties) : position_(parties, 0) {}

bool StepGate::others_at_or_past(std::size_t party, std::uint64_t step) const {
  for (std::size_t other = 0; other < position_.size(); ++other)
    if (other != party && position_[other] < step) return false;
  return true;
}

StepGate::Arrival StepGate::arrive(std::size_t party, std::uint64_t step,
                                   std::chrono::steady_clock::time_point deadline,
                                   const std::function<bool()>& should_stop,
                                   std::chrono::milliseconds poll_interval) {
  std::unique_lock lock(mutex_);
  position_[party] = std::max(position_[party], step);
  moved_.notify_all();
  while (!others_at_or_past(party, step)) {
    if (should_stop && should_stop()) return Arrival::stopped;
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return Arrival::waited_out;
    moved_.wait_until(lock, std::min(deadline, now + poll_interval));
  }
  return Arrival::in_step;
}

void StepGate::leave(std::size_t party) {
  std::lock_guard lock(mutex_);
  position_[party] = kLeft;
  moved_.notify_all();
}

}  // namespace gpuoverlap
