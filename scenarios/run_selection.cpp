#include "scenarios/run_selection.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "scenarios/presets.h"

namespace gpuoverlap {

namespace {

// --load-process, --duration-ms and --target-ms on every preemption scenario, checked again.
Status apply_preemption_overrides(const RunOverrides& overrides,
                                  std::vector<Scenario>& scenarios) {
  for (Scenario& s : scenarios) {
    if (!s.preemption) continue;
    preemption::PreemptionSpec& spec = *s.preemption;
    if (overrides.load_process) spec.process = preemption::ProcessMode::separate;
    if (overrides.duration_ms) spec.duration_ms = *overrides.duration_ms;
    if (overrides.target_ms) spec.target_ms = *overrides.target_ms;
    if (Status v = preemption::validate(spec); !v)
      return v.error().with_context("scenario '" + s.name + "': ");
  }
  const bool any = std::any_of(scenarios.begin(), scenarios.end(),
                               [](const Scenario& s) { return s.preemption.has_value(); });
  if (!any && (overrides.load_process || overrides.duration_ms || overrides.target_ms))
    return make_error(
        "--load-process, --duration-ms and --target-ms apply to preemption "
        "scenarios only (see 'gpuoverlap list')");
  return ok_status();
}

}  // namespace

Result<std::vector<Scenario>> select_run_scenarios(const RunSelection& selection,
                                                   std::ostream& log) {
  std::vector<Scenario> scenarios;
  auto add = [&](Scenario&& s) -> Status {
    for (const auto& other : scenarios)
      if (other.name == s.name)
        return make_error("two scenarios are named '" + s.name +
                          "'; each needs its own output directory");
    scenarios.push_back(std::move(s));
    return ok_status();
  };
  if (selection.all_presets) {
    auto suite = suite_scenarios();
    if (!suite) return suite.error();
    if (!suite->covered.empty())
      log << fmt::format("--all: {} presets run once, as part of a matrix: {}\n",
                         suite->covered.size(), fmt::join(suite->covered, ", "));
    for (const std::string& skipped : suite->not_in_run_all)
      log << "--all: not run, a study longer than the suite's minute: " << skipped << "\n";
    for (Scenario& s : suite->scenarios) GPUOVERLAP_TRY(add(std::move(s)));
  }
  for (const auto& name : selection.names) {
    auto expanded =
        resolve_scenarios(name, selection.all_presets ? std::string() : selection.foreground);
    if (!expanded) return expanded.error();
    for (Scenario& s : *expanded) GPUOVERLAP_TRY(add(std::move(s)));
  }
  for (const Scenario& s : scenarios)
    for (const std::string& warning : s.warnings) log << warning << "\n";
  return scenarios;
}

Status apply_run_overrides(const RunOverrides& overrides, std::vector<Scenario>& scenarios) {
  if (overrides.frames)
    for (Scenario& s : scenarios) s.frames = frames_per_round(*overrides.frames, s.rounds);
  for (Scenario& s : scenarios) {
    if (overrides.study_round_ms && !s.study.empty()) s.study_round_ms = *overrides.study_round_ms;
    if (s.rounds <= 1) continue;  // a study of one round is never extended
    if (overrides.study_budget_s) s.study_budget_s = *overrides.study_budget_s;
    if (overrides.study_max_rounds)
      s.study_max_rounds = std::max(*overrides.study_max_rounds, s.rounds);
  }
  return apply_preemption_overrides(overrides, scenarios);
}

}  // namespace gpuoverlap
