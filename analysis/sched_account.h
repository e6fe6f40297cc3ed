// What the kernel's scheduling record (run --sched-trace: sched_waits.csv, frames.csv's sched_*
// columns) says of a study condition's frame loop over its rounds: how long it was runnable
// without a CPU, how much of that behind background threads, and the way it mostly lost the CPU
// to them, in one sentence for the summary, answer 4 and verdict.json.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "engine/suite_runner.h"

namespace gpuoverlap {

struct SchedAccount {
  std::size_t rounds = 0;  // rounds with the record
  std::size_t frames = 0;  // frames with an interval the record explains
  double runnable_ms = 0;
  double to_background_ms = 0;
  std::optional<double> run_delay_ms;  // the kernel's schedstat over the same frames
  // The way it most lost time to background threads: "after it yielded, until the next tick".
  std::string most_way;
  std::size_t most_times = 0;
  double most_ms = 0, most_p50_ms = 0;
  std::string line;  // the sentence
};

// Over `rounds` (one condition's, or the baseline's); none where no round has the record.
std::optional<SchedAccount> sched_account(const std::vector<const ScenarioOutcome*>& rounds);

}  // namespace gpuoverlap
