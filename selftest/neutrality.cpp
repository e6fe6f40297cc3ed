// The self-test's neutrality row: the negative control against the baseline on the game frame,
// judged as a study judges it.
#include <fmt/format.h>

#include <algorithm>
#include <sstream>
#include <string_view>

#include "analysis/verdict.h"
#include "engine/suite_runner.h"
#include "scenarios/presets.h"
#include "scenarios/scenario.h"
#include "selftest/selftest.h"

namespace gpuoverlap {

namespace {

// Three interleaved rounds of at most a second each (the non-intrusiveness study's rounds).
constexpr std::string_view kNeutralityStudy = R"(name = "selftest-neutrality"
foreground = "game-frame"
round_ms = 1000
warmup_frames = 12
rounds = 3
budget_s = 0

[[condition]]
name = "baseline"

[[condition]]
name = "idle-spinners"
control = "idle-spinners"
)";

}  // namespace

Result<CheckRow> neutrality_row(ScenarioExecutor& executor, const SelftestOptions& options) {
  auto foreground = resolve_scenario("game-frame");
  if (!foreground) return foreground.error();
  auto study = parse_study(kNeutralityStudy, "the self-test's neutrality study");
  if (!study) return study.error();
  study->frames = 3 * std::max(options.frames, 120u);
  const std::vector<Scenario> scenarios = expand_study(*study, *foreground);
  SuiteOptions suite = selftest_suite_options(options);
  // The study's own frames and warm-up, not --frames. On a CPU device the 8 ms period is measured
  // for the device first, as `run` does (scenarios/cpu_device_sizes.h): else every frame is late on
  // both sides.
  suite.cpu_device_pacing = options.cpu_device;
  std::ostringstream quiet;
  const SuiteOutcome out = run_suite(executor, scenarios, suite, quiet);
  if (out.failure) return *out.failure;
  std::vector<const ScenarioOutcome*> outcomes;
  for (const ScenarioOutcome& o : out.scenarios) {
    if (!o.timeline) return make_error("measurement '" + o.scenario.name + "' did not run");
    outcomes.push_back(&o);
  }
  auto verdict = judge_study(outcomes, VerdictSettings{});
  if (!verdict) return verdict.error();
  const auto cv = std::find_if(verdict->conditions.begin(), verdict->conditions.end(),
                               [](const ConditionVerdict& c) { return c.negative_control; });
  if (cv == verdict->conditions.end()) return make_error("the negative control was not judged");
  // The late frames' excess where the frame is paced (game-frame is), and why there is none
  // (too few frames in a round: a slow device, a sanitizer's build).
  std::optional<double> excess_points;
  std::string why_none = "no late_frames row";
  for (const VerdictRow& r : verdict->rows)
    if (r.condition == cv->condition && r.metric == "late_frames") {
      if (r.tail_excess) excess_points = 100.0 * *r.tail_excess;
      why_none = r.note;
    }
  std::string detail = fmt::format("negative control {}", to_string(cv->decision));
  if (cv->pacing && verdict->baseline_pacing)
    detail += fmt::format(": {} of {} frames late, baseline {} of {}", cv->pacing->late,
                          cv->pacing->frames, verdict->baseline_pacing->late,
                          verdict->baseline_pacing->frames);
  if (cv->decision == Decision::intrusive)
    detail += "; the measurement itself disturbs the frame (docs/background.md)";
  // Not judged (its rows had too few frames): neither pass nor fail, and why.
  Verdict call = cv->decision == Decision::intrusive ? Verdict::fail : Verdict::pass;
  if (!excess_points && call == Verdict::pass) {
    call = Verdict::not_applicable;
    detail += "; not judged: " + why_none;
  }
  return CheckRow{"neutrality",
                  "idle-priority threads on every foreground CPU",
                  "",
                  fmt::format("game-frame, {} rounds", verdict->rounds),
                  excess_points,
                  "points late",
                  "not intrusive",
                  call,
                  detail};
}

}  // namespace gpuoverlap
