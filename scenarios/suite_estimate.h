// How long the rest of a suite run will take, for its progress lines. An unpaced frame
// scenario costs an unknown time per frame, learnt from those run so far; a paced one (a game
// frame) about its frames times its period; a preemption scenario about its urgent jobs'
// duration plus its calibration and baseline loads. Predictions are corrected by how far they
// were off for their kind so far.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "scenarios/scenario.h"

namespace gpuoverlap {

// The disk space a run's results need, checked before any GPU work (--out): about 1 KiB per
// workload and frame, warm-up included (records and trace before compression: ~0.7 KiB), plus
// 256 KiB per scenario for its other files (meta.json, summaries, frames.csv) and 4 MiB of
// slack. A study or matrix is already expanded: one scenario per round, with that round's
// frames.
std::uint64_t estimated_results_bytes(const std::vector<Scenario>& scenarios);

// The frames a frame scenario runs: warm-up, then at most `measured` (a study's round may end
// sooner, at its round_ms).
struct FramesToRun {
  std::uint32_t warmup = 0, measured = 0;
};

class SuiteEstimate {
 public:
  // `frames_each[i]`: what scenario i will run (ignored for a preemption scenario).
  SuiteEstimate(const std::vector<Scenario>& scenarios,
                const std::vector<FramesToRun>& frames_each);

  // Scenario `index` took `seconds`.
  void finished(std::size_t index, double seconds);
  // Seconds for scenarios `next` .. end as planned; nullopt until every kind among them whose
  // cost is learnt has been seen.
  std::optional<double> remaining_s(std::size_t next) const;
  // remaining_s, plus what the studies among them may add: an undecided study takes rounds
  // until its budget_s is spent (and one round more at most, which this leaves out). Equal to
  // remaining_s when no study can add rounds.
  std::optional<double> remaining_at_most_s(std::size_t next) const;

 private:
  // Unpaced frames cost an unknown time each, learnt; a paced frame (a [cpu] table's
  // frame_period_ms) and a preemption scenario have a predicted time, corrected by how far
  // the prediction was off for their kind so far.
  enum Kind { kFrames = 0, kPaced = 1, kPreemption = 2 };
  struct Cost {
    Kind kind = kFrames;
    double units = 0;  // frames, or predicted seconds
    std::string study;
    double study_budget_s = 0;  // > 0: the study may add rounds
  };
  double cost_s(std::size_t index) const;  // nan: its kind's cost is not learnt yet
  std::vector<Cost> costs_;
  std::vector<double> seconds_each_;  // per finished scenario (nan: not finished)
  double seconds_[3] = {0, 0, 0}, units_[3] = {0, 0, 0};  // per kind, seen so far
};

// "42 s", "3 min 10 s", "1 h 5 min".
std::string format_duration(double seconds);

}  // namespace gpuoverlap
