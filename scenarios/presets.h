// The presets shipped in scenarios/presets/, embedded at build time, and the lookup that turns
// a command-line word into a validated scenario.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "scenarios/scenario.h"

namespace gpuoverlap {

struct Preset {
  std::string_view name;  // file name without .toml
  std::string_view toml;
};

std::span<const Preset> presets();  // sorted by name

// The `description` of a preset, scenario, study or preemption file alike ("" when absent).
std::string description_of(const Preset& preset);

// An existing file path is loaded as a scenario file; otherwise the word must name a preset.
// Contract: the definition is a scenario, not a study.
Result<Scenario> resolve_scenario(const std::string& preset_or_path);

// As resolve_scenario, and a study expands into one scenario per condition (expand_study).
// `foreground_override` (non-empty) replaces a study's foreground; an error for a scenario.
Result<std::vector<Scenario>> resolve_scenarios(const std::string& preset_or_path,
                                                const std::string& foreground_override = {});

// The preset suite (`run --all`): every preset's scenarios, each configuration once. A preset
// whose one scenario is measured, with the same configuration, inside another preset is left
// out and named in `covered` ("preemption-big-dispatch-high (in preemption-matrix)"): the
// twelve preemption-<load>-<priority> presets are the configurations of preemption-matrix,
// and measuring them twice cost a third of the suite. A configuration is everything but how
// long it is measured (duration_ms): the matrix measures each for less than its preset. Only
// preemption configurations are compared (the barrier-lab variants differ on purpose even where
// their work is the same).
// A study whose file says `in_run_all = false` is left out too, and named in `not_in_run_all`
// with how to run it.
struct Suite {
  std::vector<Scenario> scenarios;
  std::vector<std::string> covered;
  std::vector<std::string> not_in_run_all;
};
Result<Suite> suite_scenarios();

}  // namespace gpuoverlap
