// The naming rules of the model, checked once when a scenario is parsed so that every later
// use (directory names, CSV fields, ';'-joined lists, trace.json, plot titles) can rely on
// them. docs/scenario-format.md, "Names", states the same rules for users.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace gpuoverlap {

inline constexpr std::size_t kMaxNameBytes = 64;

// A scenario, study or condition name becomes a directory under the results: 1-64 of
// letters, digits, '.', '_', '-', not starting with '.', and not a name the results root
// already uses for something else ("plots", "run.json", "report.md", any case).
// Returns "" when allowed, else the reason.
std::string directory_name_problem(std::string_view name);

// A workload or queue name is a label in CSV columns, ';'-joined dependency lists, the trace
// and plots: 1-64 bytes, no control character (no newline, CR, tab or NUL), no ';', no space
// at either end. Everything else (spaces inside, ',', '"', UTF-8) round-trips through the CSV
// writer and reader. Returns "" when allowed, else the reason.
std::string label_problem(std::string_view name);

// `text` for an error message: control characters as \xNN, cut after kMaxNameBytes.
std::string printable_name(std::string_view text);

// A message stays one line whatever it quotes: control characters as \xNN.
std::string escape_control_characters(std::string_view text);

}  // namespace gpuoverlap
