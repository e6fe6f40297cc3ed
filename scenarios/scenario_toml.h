// A scenario as a scenario file: what `run --live`'s "save as TOML" writes, and how a live
// edit is re-validated (written, then parsed by the parser `validate` uses, so an edit is held
// to exactly the rules a file is). Contract: parse_scenario(to_toml(s)) gives back `s`'s
// queues, workloads, dependencies with their barriers, frames, defaults, timestamps and
// background (tests/unit/scenario_toml_test.cpp checks it on every preset).
#pragma once

#include <string>
#include <string_view>

#include "scenarios/scenario.h"

namespace gpuoverlap {

// A TOML basic string: quoted, with backslash, quote and control characters escaped.
std::string toml_string(std::string_view text);

// The file text of a frame scenario (not a study or preemption scenario, which are made from
// other files). Every dependency is written as a table with its barrier, so the defaults of
// the text it came from do not matter; background keys are written where they differ from
// their defaults (the parser refuses some keys in some combinations, never a default left out).
std::string to_toml(const Scenario& scenario);

}  // namespace gpuoverlap
