#pragma once
// A study verdict's decision as a value. judge_study makes them, verdict.csv and verdict.json
// carry their text (the files' form alone), and every reader (the report, the viewer, the
// history, the devices' report) turns that text back into a Decision here, once, at the edge:
// nothing compares decision strings.
#include <array>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string_view>

#include "core/enum_names.h"

namespace gpuoverlap {

enum class Decision {
  // A primary endpoint's or a condition's (docs/background.md, "The verdict").
  non_intrusive,
  intrusive,
  inconclusive,
  no_power,  // inconclusive because the positive control was not detected
  // A diagnostic's: how it moved, never deciding alone.
  diagnostic_worse,
  diagnostic_within,
  diagnostic_unclear,
};

inline constexpr EnumNames<Decision, 7> kDecisionNames{
    {{Decision::non_intrusive, "non-intrusive"},
     {Decision::intrusive, "intrusive"},
     {Decision::inconclusive, "inconclusive"},
     {Decision::no_power, "inconclusive (no power)"},
     {Decision::diagnostic_worse, "diagnostic: worse"},
     {Decision::diagnostic_within, "diagnostic: within"},
     {Decision::diagnostic_unclear, "diagnostic: unclear"}}};

std::string_view to_string(Decision decision);
std::ostream& operator<<(std::ostream& out, Decision decision);  // for test messages

// The files' text of a decision; nullopt for anything else (untrusted input).
std::optional<Decision> parse_decision(std::string_view text);

// `object`'s "verdict" member (a condition or a control dose of verdict.json); nullopt when it
// is missing, not a string, or no decision.
std::optional<Decision> decision_of(const nlohmann::json& object);

// Undecided: inconclusive, with or without power.
constexpr bool is_inconclusive(Decision d) {
  return d == Decision::inconclusive || d == Decision::no_power;
}
// A primary endpoint's or a condition's call, as opposed to a diagnostic's move.
constexpr bool is_primary_decision(Decision d) {
  return d == Decision::non_intrusive || d == Decision::intrusive || is_inconclusive(d);
}

}  // namespace gpuoverlap
