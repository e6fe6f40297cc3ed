// What `run` measures: the preset suite and the presets and files named, each resolved and
// validated before any GPU work (a study expanded into its conditions and rounds), then the
// command line's overrides of sizes, study rounds and preemption durations, validated again.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "core/result.h"
#include "scenarios/scenario.h"

namespace gpuoverlap {

struct RunSelection {
  bool all_presets = false;          // --all: the preset suite (suite_scenarios), first
  std::vector<std::string> names;    // presets or scenario files, in order
  std::string foreground;            // --foreground: replaces a named study's foreground
};

// The scenarios in run order; what the suite leaves out and each scenario's warnings go to
// `log`, a line each. An input Error for a name that resolves to nothing, a bad file, or two
// scenarios of one name (each needs its own output folder).
Result<std::vector<Scenario>> select_run_scenarios(const RunSelection& selection,
                                                   std::ostream& log);

// The command line's overrides of what the files say; unset keeps the file's.
struct RunOverrides {
  std::optional<std::uint32_t> frames;            // per scenario; a study condition's over all
                                                  // its planned rounds
  std::optional<std::uint32_t> study_round_ms;    // every study's round_ms
  std::optional<double> study_budget_s;           // a study of several rounds: budget_s
  std::optional<std::uint32_t> study_max_rounds;  // ... max_rounds, at least its rounds
  bool load_process = false;                      // preemption: the load in its own process
  std::optional<double> duration_ms, target_ms;   // preemption: the files' durations
};

// An input Error where a preemption override leaves a spec invalid, or where preemption
// overrides are given and no scenario is a preemption one.
Status apply_run_overrides(const RunOverrides& overrides, std::vector<Scenario>& scenarios);

}  // namespace gpuoverlap
