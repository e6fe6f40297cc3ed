// A study verdict's two files: verdict.csv (every metric of every condition) and verdict.json
// (each condition's call and progress, the control's doses, the settings, how the study
// stopped). Written here and read back here: this is the only place that knows their text, and
// every reader (the report, the answers, the devices' page, `compare`, the history, the viewer)
// gets judge_study's own types back, decisions and roles as enums.
//
// Older files: verdict.csv without `role` reads every row as primary, without `tests` as a test
// of median and tail (what every row was before those columns); a member of verdict.json that
// a version lacked keeps its type's default, and where a reader must tell "absent" from zero
// the type holds an optional. Results folders are untrusted: each loader returns an Error naming
// the file, and the line and column or member, for anything it cannot read.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "analysis/verdict.h"
#include "core/result.h"

namespace gpuoverlap {

std::string verdict_csv(const StudyVerdict& verdict);

// verdict.json's core: the verdict and the settings it was judged with. write_study_verdicts
// adds `progress` (study_progress_json), `summary` and `benefit`.
nlohmann::json verdict_json(const StudyVerdict& verdict, const VerdictSettings& settings);

// verdict.json's `progress`: the rounds asked and run, and why no more ran.
struct StudyRounds {
  std::uint32_t planned = 0;
  std::uint32_t run = 0;
  double seconds = 0;
  double budget_s = 0;
  std::uint32_t max_rounds = 0;
  bool decided = false;
  std::string stop;  // "decided", "budget", ...; "the run ended" when it stopped before
};
nlohmann::json study_rounds_json(const StudyRounds& rounds);

// verdict.csv's rows, in the file's order. Every field of VerdictRow the file has a column for;
// `null_control` is not a column (verdict.json names the null control).
Result<std::vector<VerdictRow>> load_verdict_csv(const std::filesystem::path& file);

// verdict.json read back. `verdict` holds what the file carries: the study's figures and every
// condition (its decision, pacing, time account, progress, scheduling, burst note) and dose;
// not the rows (verdict.csv's), nor a condition's host bursts (their line is in `summary`).
// Contract: `verdict.conditions` is non-empty only as the file lists them; an unknown decision,
// a condition without a name or a member of the wrong type is an Error.
struct LoadedStudyVerdict {
  StudyVerdict verdict;
  VerdictSettings settings;
  // Absent in files written before the study's rounds were recorded.
  std::optional<StudyRounds> rounds;
  // Per condition, in the file's order: whether its progress had a compile rate (older files
  // and conditions that ran no background work lack it), so a reader shows "?" for absent.
  std::vector<bool> has_compile_rate;
};
Result<LoadedStudyVerdict> load_verdict_json(const std::filesystem::path& file);

}  // namespace gpuoverlap
