// The end of a run's studies: each judged, its verdict.csv and verdict.json written (with the
// benefit and the rounds' progress), and its table and summary on the terminal.
#include <fmt/format.h>

#include <cmath>

#include "analysis/study_files.h"
#include "analysis/variant_swap.h"
#include "analysis/verdict_internal.h"
#include "core/atomic_file.h"

namespace gpuoverlap {

namespace {

std::string number(const std::optional<double>& v) {
  return v && std::isfinite(*v) ? fmt::format("{:.4f}", *v) : "";
}

// The lines under a study's verdict: its rounds and why they stopped, and, when undecided,
// what the rounds could have seen.
std::string progress_lines(const StudyVerdict& verdict, const StudyProgress& progress,
                           std::uint32_t planned) {
  std::string out = fmt::format("rounds: {} ({} planned); {}\n", progress.rounds, planned,
                                progress.stop.empty() ? "the run ended" : progress.stop);
  // Only rows of conditions still undecided: an inconclusive row of a condition intrusive on
  // another endpoint is decided, and what it could have seen says nothing about the study.
  auto condition_undecided = [&](const std::string& condition) {
    return std::any_of(verdict.conditions.begin(), verdict.conditions.end(),
                       [&](const ConditionVerdict& c) {
                         return c.condition == condition && is_inconclusive(c.decision);
                       });
  };
  double ratio = 0, tail = 0;
  for (const VerdictRow& r : verdict.rows)
    if (verdict_internal::undecided(r) && r.detectable_ratio && condition_undecided(r.condition))
      ratio = std::max(ratio, *r.detectable_ratio), tail = std::max(tail, *r.detectable_tail);
  if (ratio > 0)
    out += fmt::format(
        "undecided rows could have seen (half the time) a median ratio of {:.3f} or a tail of "
        "{:+.1f} points, at worst\n",
        ratio, 100.0 * tail);
  return out;
}

}  // namespace

Status write_study_verdicts(const SuiteOutcome& outcome, const std::filesystem::path& out,
                            const VerdictSettings& settings, std::ostream& log) {
  const verdict_internal::StudyOutcomes found = verdict_internal::study_outcomes(outcome);
  for (const auto& [study, conditions] : found.studies) {
    if (!found.complete.at(study)) {
      log << "study " << study << ": not judged, a condition failed or did not run\n";
      continue;
    }
    auto verdict = judge_study(conditions, settings);
    if (!verdict) return verdict.error().with_context("study " + study + ": ");
    const std::filesystem::path directory = out / study;
    std::error_code ec;
    std::filesystem::create_directories(directory, ec);
    if (ec) return make_error("cannot create " + directory.string() + ": " + ec.message());
    GPUOVERLAP_TRY(write_file_atomically(directory / "verdict.csv", verdict_csv(*verdict)));
    const StudyProgress progress = study_progress(conditions, *verdict);
    // The benefit beside the cost: conditions that bind what they commit (bind_committed).
    const std::vector<StudyBenefit> benefits = study_benefits(conditions);
    std::string benefit_lines;
    nlohmann::json benefit_json = nlohmann::json::array();
    for (const StudyBenefit& b : benefits) {
      benefit_lines += "benefit of " + describe(b) + "\n";
      benefit_json.push_back(
          {{"condition", b.condition},
           {"workload", b.workload},
           {"clock", std::string(to_string(b.clock))},
           {"rounds", b.rounds},
           {"ratio", b.ratio},
           {"ratio_low", b.ratio_low ? nlohmann::json(*b.ratio_low) : nullptr},
           {"ratio_high", b.ratio_high ? nlohmann::json(*b.ratio_high) : nullptr},
           {"call", std::string(to_string(b.call))}});
    }
    const std::string summary =
        verdict->summary + benefit_lines +
        progress_lines(*verdict, progress, conditions.front()->scenario.rounds);
    nlohmann::json json = verdict_json(*verdict, settings);
    if (!benefits.empty()) json["benefit"] = benefit_json;
    json["summary"] = summary;
    json["progress"] = study_rounds_json(
        {conditions.front()->scenario.rounds, progress.rounds,
         std::round(progress.seconds * 10) / 10, conditions.front()->scenario.study_budget_s,
         conditions.front()->scenario.study_max_rounds, progress.decided,
         // Empty only when the run stopped before the study could go on.
         progress.stop.empty() ? "the run ended" : progress.stop});
    GPUOVERLAP_TRY(write_file_atomically(directory / "verdict.json", json.dump(2) + "\n"));
    log << "\nstudy " << study << " (" << verdict->rounds
        << " rounds; baseline: " << verdict->baseline << "; GPU durations on the "
        << to_string(verdict->gpu_clock) << " clock; unit: " << verdict->unit << "; "
        << verdict->tests << " tests per condition):\n";
    log << fmt::format("  {:<22} {:<34} {:>9} {:>9} {:>9} {:>8} {:>8} {:>8}  {}\n", "condition",
                       "metric", "p50 ratio", "low", "high", "tail +", "low", "high", "verdict");
    auto percent = [](const std::optional<double>& v) {
      return v ? fmt::format("{:+.2f}%", 100.0 * *v) : std::string();
    };
    for (const VerdictRow& r : verdict->rows)
      log << fmt::format("  {:<22} {:<34} {:>9} {:>9} {:>9} {:>8} {:>8} {:>8}  {}\n", r.condition,
                         r.metric, number(r.ratio_p50), number(r.ci_low), number(r.ci_high),
                         percent(r.tail_excess), percent(r.tail_ci_low), percent(r.tail_ci_high),
                         to_string(r.decision));
    log << summary;
    log << "verdict: " << (directory / "verdict.csv").string() << "\n";
  }
  return ok_status();
}

}  // namespace gpuoverlap
