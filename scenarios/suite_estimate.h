// How long the rest of a suite run will take, for its progress lines. A frame scenario costs
// an unknown time per frame, learnt from the frame scenarios run so far; a preemption
// scenario costs about its urgent jobs' duration plus its calibration and baseline loads,
// corrected by how far that prediction was off for the preemption scenarios run so far.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "scenarios/scenario.h"

namespace gpuoverlap {

// The disk space a run's results need, checked before any GPU work (--out): about 1 KiB per
// workload and frame, warm-up included (records.csv, trace.json: ~0.7 KiB measured), plus
// 256 KiB per scenario for its other files (meta.json, summaries, frames.csv) and 4 MiB of
// slack. A study or matrix is already expanded: one scenario per round, with that round's
// frames.
std::uint64_t estimated_results_bytes(const std::vector<Scenario>& scenarios);

class SuiteEstimate {
 public:
  // `frames_each[i]`: the warm-up plus measured frames scenario i will run (ignored for a
  // preemption scenario).
  SuiteEstimate(const std::vector<Scenario>& scenarios, std::vector<std::uint32_t> frames_each);

  // Scenario `index` took `seconds`.
  void finished(std::size_t index, double seconds);
  // Seconds for scenarios `next` .. end; nullopt until every kind among them has been seen.
  std::optional<double> remaining_s(std::size_t next) const;

 private:
  struct Cost {
    bool preemption = false;
    double units = 0;  // frames, or predicted seconds of a preemption scenario
  };
  std::vector<Cost> costs_;
  double seconds_[2] = {0, 0}, units_[2] = {0, 0};  // [frames, preemption] seen so far
};

// "42 s", "3 min 10 s", "1 h 5 min".
std::string format_duration(double seconds);

}  // namespace gpuoverlap
