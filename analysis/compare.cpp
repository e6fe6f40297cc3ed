#include "analysis/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "analysis/answers.h"
#include "analysis/verdict.h"
#include "timeline/export.h"
#include "timeline/statistics.h"

namespace gpuoverlap {

namespace {

std::string metric_name(const MetricSeries& m) {
  return m.metric == "gap" ? "gap <- " + m.producer : m.metric;
}

}  // namespace

double separation_chance(std::size_t baseline_runs, std::size_t candidate_runs) {
  // C(n+m, m) by the multiplicative formula; doubles hold it exactly far beyond any run count
  // a study would use, and a chance below 1e-300 is zero for every purpose here.
  double ways = 1;
  for (std::size_t i = 1; i <= candidate_runs; ++i)
    ways = ways * static_cast<double>(baseline_runs + i) / static_cast<double>(i);
  return std::min(1.0, 2.0 / ways);
}

std::string to_string(CompareMethod method) {
  return method == CompareMethod::runs ? "runs" : "frames";
}

std::string compare_unit(const LoadedScenario& scenario) {
  if (!scenario.study || scenario.study->round == 0) return scenario.name;
  const std::string tail = "/round-" + std::to_string(scenario.study->round);
  return scenario.name.ends_with(tail) ? scenario.name.substr(0, scenario.name.size() - tail.size())
                                       : scenario.name;
}

Interval share_difference_interval(std::size_t baseline_hits, std::size_t baseline_frames,
                                   std::size_t candidate_hits, std::size_t candidate_frames) {
  const auto adjusted = [](std::size_t hits, std::size_t frames) {
    return (static_cast<double>(hits) + 1.0) / (static_cast<double>(frames) + 2.0);
  };
  const double pb = adjusted(baseline_hits, baseline_frames);
  const double pc = adjusted(candidate_hits, candidate_frames);
  const double se = std::sqrt(pb * (1 - pb) / (static_cast<double>(baseline_frames) + 2.0) +
                              pc * (1 - pc) / (static_cast<double>(candidate_frames) + 2.0));
  const double observed =
      100.0 * (static_cast<double>(candidate_hits) / static_cast<double>(candidate_frames) -
               static_cast<double>(baseline_hits) / static_cast<double>(baseline_frames));
  // Centred on the adjusted difference, as the method is; the observed one always lies inside.
  const double centre = 100.0 * (pc - pb), half = 100.0 * 1.959964 * se;
  return {std::min(centre - half, observed), std::max(centre + half, observed)};
}

namespace {

constexpr double kWorkloadPercentiles[2] = {50.0, 95.0};
// A frame's tail is what a player notices: the p99, as PresentMon and CapFrameX report it.
constexpr double kFramePercentiles[2] = {50.0, 99.0};

const MetricSeries* find_metric(const std::vector<MetricSeries>& series, const MetricSeries& m) {
  const auto it = std::find_if(series.begin(), series.end(), [&](const MetricSeries& s) {
    return s.workload == m.workload && s.metric == m.metric && s.producer == m.producer;
  });
  return it == series.end() ? nullptr : &*it;
}

double median_of(std::vector<double> values) { return *percentile(values, 50.0); }

// The runs method's row: each run reduced to its own two percentiles first.
void judge_by_runs(CompareRow& row, const std::vector<const std::vector<double>*>& baseline,
                   const std::vector<const std::vector<double>*>& candidate,
                   const double (&percentiles)[2]) {
  for (int i = 0; i < 2; ++i) {
    std::vector<double> base, cand;
    for (const std::vector<double>* values : baseline)
      base.push_back(*percentile(*values, percentiles[i]));
    for (const std::vector<double>* values : candidate)
      cand.push_back(*percentile(*values, percentiles[i]));
    row.baseline[i] = median_of(base);
    row.candidate[i] = median_of(cand);
    const auto [base_low, base_high] = std::minmax_element(base.begin(), base.end());
    const auto [cand_low, cand_high] = std::minmax_element(cand.begin(), cand.end());
    row.difference[i] = {*cand_low - *base_high, *cand_high - *base_low};
  }
}

void judge_by_frames(CompareRow& row, const std::vector<double>& baseline,
                     const std::vector<double>& candidate, const double (&percentiles)[2],
                     int resamples) {
  for (int i = 0; i < 2; ++i) {
    row.baseline[i] = *percentile(baseline, percentiles[i]);
    row.candidate[i] = *percentile(candidate, percentiles[i]);
    row.difference[i] =
        bootstrap_percentile_difference(baseline, candidate, percentiles[i], resamples);
  }
}

// A row's verdict against the threshold: relative to the baseline, and at least the smallest
// change that matters in the row's unit (µs, or percentage points for a share).
void judge_verdict(CompareRow& row, double threshold_pct, double min_change) {
  const int statistics = row.section == CompareSection::frame_share ? 1 : 2;
  for (int i = 0; i < statistics; ++i) {
    const double allowed = std::max(threshold_pct / 100.0 * std::abs(row.baseline[i]), min_change);
    if (row.difference[i].low > allowed) row.outcome = CompareOutcome::slower;
    if (row.difference[i].high < -allowed && row.outcome == CompareOutcome::ok)
      row.outcome = CompareOutcome::faster;
  }
}

std::string where(const LoadedRun& run, bool in_candidate) {
  return std::string(in_candidate ? " in the candidate" : " in the baseline") + " run " +
         run.directory.string();
}

// Warns when the runs of one side did not all run on the same platform.
void check_one_platform(std::span<const LoadedRun> side, const std::string& name,
                        const std::string& first, std::vector<std::string>& warnings) {
  for (const LoadedRun& run : side)
    if (!run.scenarios.empty() && platform_of(run.scenarios.front().meta) != first) {
      warnings.push_back("the " + name + " runs ran on more than one platform (" +
                         run.directory.string() + ": " + platform_of(run.scenarios.front().meta) +
                         ")");
      return;
    }
}

// A run's scenarios grouped by compare_unit, in run order.
using Units = std::vector<std::pair<std::string, std::vector<const LoadedScenario*>>>;

Units units_of(const LoadedRun& run) {
  Units units;
  for (const LoadedScenario& s : run.scenarios) {
    const std::string unit = compare_unit(s);
    const auto it =
        std::find_if(units.begin(), units.end(), [&](const auto& u) { return u.first == unit; });
    if (it == units.end())
      units.push_back({unit, {&s}});
    else
      it->second.push_back(&s);
  }
  return units;
}

const std::vector<const LoadedScenario*>* find_unit(const Units& units, const std::string& name) {
  for (const auto& [unit, scenarios] : units)
    if (unit == name) return &scenarios;
  return nullptr;
}

// Each scenario's series, the values of one workload metric concatenated over the rounds.
std::vector<MetricSeries> pooled_series(const std::vector<const LoadedScenario*>& scenarios,
                                        Clock clock) {
  std::vector<MetricSeries> pooled;
  for (const LoadedScenario* s : scenarios)
    for (MetricSeries& m : metric_series(*s, clock)) {
      const auto into = std::find_if(pooled.begin(), pooled.end(), [&](const MetricSeries& p) {
        return p.workload == m.workload && p.metric == m.metric && p.producer == m.producer;
      });
      if (into == pooled.end()) {
        pooled.push_back(std::move(m));
        continue;
      }
      into->values_us.insert(into->values_us.end(), m.values_us.begin(), m.values_us.end());
      into->disturbed_frames += m.disturbed_frames;
    }
  return pooled;
}

// The frame period (µs) a paced game frame keeps; nullopt when unpaced.
std::optional<double> frame_period_us(const LoadedScenario& s) {
  if (!s.meta.frame_period_ms) return std::nullopt;
  return *s.meta.frame_period_ms * 1000.0;
}

// What a player feels of one unit in one run: its ok frames' figures (frames.csv), pooled over
// the rounds.
struct FrameSample {
  std::vector<double> interval_us, cpu_phase_us, critical_path_us, wake_max_us;
  std::optional<double> period_us;  // the pace kept (on a CPU device calibrated per run)
};

FrameSample frame_sample(const std::vector<const LoadedScenario*>& scenarios) {
  FrameSample out;
  out.period_us = frame_period_us(*scenarios.front());
  for (const LoadedScenario* s : scenarios)
    for (const LoadedFrame& f : s->frames) {
      if (!f.ok) continue;
      for (auto [value, into] : {std::pair{&f.frame_interval_us, &out.interval_us},
                                 std::pair{&f.cpu_phase_us, &out.cpu_phase_us},
                                 std::pair{&f.critical_path_us, &out.critical_path_us},
                                 std::pair{&f.wake_max_us, &out.wake_max_us}})
        if (*value) into->push_back(**value);
    }
  return out;
}

// A game frame's scenario: a [cpu] table (a study's game foreground has one too). Other
// scenarios have frame intervals as well (the frame loop's cadence), which no player feels.
bool has_game_frame(const LoadedScenario& s) { return s.game_frame; }

// The frame section's rows of one unit: `samples` baseline runs first.
// `lacks(r, what)`: run r lacks what the first baseline run measured (compare's `missing`).
void compare_frames(const std::string& unit, const std::vector<FrameSample>& samples,
                    std::size_t baseline_runs, CompareResult& result, const CompareOptions& options,
                    const std::function<void(std::size_t, const std::string&)>& lacks) {
  const bool by_runs = result.method == CompareMethod::runs;
  const auto distribution = [&](const char* metric, auto member) {
    // A metric the first baseline run lacks (no critical chain) is not judged; one another run
    // lacks is missing there, as a workload would be.
    if ((samples[0].*member).empty()) return;
    std::vector<const std::vector<double>*> values;
    bool all = true;
    for (std::size_t r = 0; r < samples.size(); ++r) {
      if ((samples[r].*member).empty()) {
        lacks(r, std::string("frame ") + metric);
        all = false;
      }
      values.push_back(&(samples[r].*member));
    }
    if (!all) return;
    CompareRow row{unit, "frame", metric, CompareSection::frames, {}, {}, {}, CompareOutcome::ok};
    if (by_runs)
      judge_by_runs(row, {values.begin(), values.begin() + static_cast<long>(baseline_runs)},
                    {values.begin() + static_cast<long>(baseline_runs), values.end()},
                    kFramePercentiles);
    else
      judge_by_frames(row, *values[0], *values[1], kFramePercentiles, options.resamples);
    judge_verdict(row, result.threshold_pct, options.min_change_us);
    result.rows.push_back(std::move(row));
  };
  distribution("interval", &FrameSample::interval_us);
  // The frame-pacing definitions of the study's verdict (verdict.h): late beyond the pace and
  // the baseline's own jitter, a stutter beyond 1.5 periods. Each run against its own pace: on
  // a CPU device the period is calibrated per run, and a run is late by what it promised.
  bool paced = samples[0].period_us.has_value() && !samples[0].interval_us.empty();
  for (std::size_t r = 1; r < samples.size() && paced; ++r)
    if (!samples[r].period_us || samples[r].interval_us.empty()) {
      lacks(r, "a paced frame (frame_period_ms and intervals)");
      paced = false;
    }
  if (paced) {
    std::vector<std::vector<double>> baseline_ratios;  // intervals in periods
    for (std::size_t r = 0; r < baseline_runs; ++r) {
      baseline_ratios.emplace_back();
      for (double v : samples[r].interval_us)
        baseline_ratios.back().push_back(v / *samples[r].period_us);
    }
    const double tolerance = late_tolerance_us(1.0, baseline_ratios, std::nullopt);
    std::vector<PacingSummary> pacing;
    for (const FrameSample& sample : samples)
      pacing.push_back(pacing_summary(sample.interval_us, *sample.period_us * (1 + tolerance),
                                      1.5 * *sample.period_us));
    const bool one_period = std::all_of(samples.begin(), samples.end(), [&](const FrameSample& f) {
      return *f.period_us == *samples[0].period_us;
    });
    if (!one_period)
      result.warnings.push_back(fmt::format(
          "'{}' kept another frame period in some runs ({:.2f} ms in the first baseline run; a "
          "CPU device calibrates it per run): the interval compares the paces too; late frames "
          "and stutters are judged against each run's own",
          unit, *samples[0].period_us / 1000.0));
    const double period_ms = *samples[0].period_us / 1000.0;
    const bool all_have_frames = std::all_of(pacing.begin(), pacing.end(),
                                             [](const PacingSummary& p) { return p.frames > 0; });
    for (const bool stutters : {false, true}) {
      if (!all_have_frames) break;
      const auto hits = [&](const PacingSummary& p) { return stutters ? p.stutters : p.late; };
      const auto share_pct = [&](const PacingSummary& p) {
        return 100.0 * static_cast<double>(hits(p)) / static_cast<double>(p.frames);
      };
      CompareRow row{unit,
                     "frame",
                     stutters ? (one_period ? fmt::format("stutters (> {:.2f} ms)", 1.5 * period_ms)
                                            : std::string("stutters (> 1.5 periods)"))
                     : one_period ? fmt::format("late (> {:.2f} ms)", period_ms * (1 + tolerance))
                                  : fmt::format("late (> period + {:.1f} %)", 100 * tolerance),
                     CompareSection::frame_share,
                     {},
                     {},
                     {},
                     CompareOutcome::ok};
      if (by_runs) {
        std::vector<double> base, cand;
        for (std::size_t r = 0; r < pacing.size(); ++r)
          (r < baseline_runs ? base : cand).push_back(share_pct(pacing[r]));
        row.baseline[0] = median_of(base);
        row.candidate[0] = median_of(cand);
        row.difference[0] = {*std::min_element(cand.begin(), cand.end()) -
                                 *std::max_element(base.begin(), base.end()),
                             *std::max_element(cand.begin(), cand.end()) -
                                 *std::min_element(base.begin(), base.end())};
      } else {
        row.baseline[0] = share_pct(pacing[0]);
        row.candidate[0] = share_pct(pacing[1]);
        row.difference[0] = share_difference_interval(hits(pacing[0]), pacing[0].frames,
                                                      hits(pacing[1]), pacing[1].frames);
      }
      judge_verdict(row, result.threshold_pct, options.min_change_share_pct);
      result.rows.push_back(std::move(row));
    }
  }
  distribution("CPU phase", &FrameSample::cpu_phase_us);
  distribution("critical path", &FrameSample::critical_path_us);
  distribution("wake-up (worst)", &FrameSample::wake_max_us);
}

// The most frequent decision among `decisions` (the first of equals, in run order).
std::optional<Decision> mode_of(const std::vector<std::optional<Decision>>& decisions) {
  std::optional<Decision> best;
  std::size_t best_count = 0;
  for (const std::optional<Decision>& d : decisions) {
    const auto count = static_cast<std::size_t>(std::count(decisions.begin(), decisions.end(), d));
    if (count > best_count) best = d, best_count = count;
  }
  return best;
}

// Every condition of every study of the first baseline run whose decision differs between the
// sides: their most frequent decisions differ.
void compare_decisions(std::span<const LoadedRun> baseline, std::span<const LoadedRun> candidate,
                       CompareResult& result) {
  std::vector<std::vector<StudyFile>> studies;
  for (const auto* side : {&baseline, &candidate})
    for (const LoadedRun& run : *side) studies.push_back(read_studies(run));
  const auto decision_in = [](const std::vector<StudyFile>& files, const std::string& study,
                              const std::string& condition) -> std::optional<Decision> {
    for (const StudyFile& f : files)
      if (f.name == study && f.verdict)
        for (const ConditionVerdict& c : f.verdict->verdict.conditions)
          if (c.condition == condition) return c.decision;
    return std::nullopt;
  };
  for (const StudyFile& study : studies.front()) {
    if (!study.verdict) continue;
    for (const ConditionVerdict& c : study.verdict->verdict.conditions) {
      DecisionChange change{study.name, c.condition, {}, {}, {}, {}, false};
      for (std::size_t r = 0; r < studies.size(); ++r)
        (r < baseline.size() ? change.baseline : change.candidate)
            .push_back(decision_in(studies[r], change.study, change.condition));
      change.baseline_mode = mode_of(change.baseline);
      change.candidate_mode = mode_of(change.candidate);
      if (change.baseline_mode == change.candidate_mode) continue;
      const auto decided = [](const std::optional<Decision>& d) {
        return d && (*d == Decision::non_intrusive || *d == Decision::intrusive);
      };
      // A decision held by more than half of a side's runs; a tie or a plurality is no call.
      const auto majority = [](const std::vector<std::optional<Decision>>& runs,
                               const std::optional<Decision>& mode) {
        return 2 * static_cast<std::size_t>(std::count(runs.begin(), runs.end(), mode)) >
               runs.size();
      };
      change.gates = decided(change.baseline_mode) && decided(change.candidate_mode) &&
                     majority(change.baseline, change.baseline_mode) &&
                     majority(change.candidate, change.candidate_mode);
      result.changed = result.changed || change.gates;
      result.decision_changes.push_back(std::move(change));
    }
  }
}

}  // namespace

CompareResult compare_runs(std::span<const LoadedRun> baseline,
                           std::span<const LoadedRun> candidate, const CompareOptions& options) {
  CompareResult result;
  result.baseline_runs = baseline.size();
  result.candidate_runs = candidate.size();
  result.method =
      baseline.size() > 1 || candidate.size() > 1 ? CompareMethod::runs : CompareMethod::frames;
  result.threshold_pct =
      options.threshold_pct.value_or(result.method == CompareMethod::runs ? 5.0 : 10.0);
  if (result.method == CompareMethod::runs) {
    result.chance_per_metric = separation_chance(baseline.size(), candidate.size());
    if (result.chance_per_metric > 0.05)
      result.warnings.push_back(fmt::format(
          "with {} baseline and {} candidate runs, an unchanged metric lies wholly beyond the "
          "baseline by chance with probability up to {:.1f}%: too few runs for a gate (5 per "
          "side, interleaved, make it 0.8%)",
          baseline.size(), candidate.size(), 100.0 * result.chance_per_metric));
  }
  if (baseline.empty() || candidate.empty()) return result;
  const LoadedRun& reference = baseline.front();
  if (!reference.scenarios.empty() && !candidate.front().scenarios.empty()) {
    const ScenarioMeta& base_meta = reference.scenarios.front().meta;
    const ScenarioMeta& cand_meta = candidate.front().scenarios.front().meta;
    result.baseline_platform = platform_of(base_meta);
    result.candidate_platform = platform_of(cand_meta);
    result.different_apis = api_of(base_meta) != api_of(cand_meta);
    check_one_platform(baseline, "baseline", result.baseline_platform, result.warnings);
    check_one_platform(candidate, "candidate", result.candidate_platform, result.warnings);
  }
  // Every run's units, baseline runs first; a run without one of the reference's is reported.
  std::vector<const LoadedRun*> runs;
  for (const LoadedRun& r : baseline) runs.push_back(&r);
  for (const LoadedRun& r : candidate) runs.push_back(&r);
  std::vector<Units> units;
  for (const LoadedRun* r : runs) units.push_back(units_of(*r));
  // Named members, not a structured binding: the frame section's lambda below captures the
  // unit's name, which clang before 16 refuses for a binding.
  for (const auto& reference_unit : units.front()) {
    const std::string& unit = reference_unit.first;
    const std::vector<const LoadedScenario*>& reference_scenarios = reference_unit.second;
    std::vector<const std::vector<const LoadedScenario*>*> matched_units;
    bool complete = true;
    for (std::size_t r = 0; r < runs.size(); ++r) {
      matched_units.push_back(find_unit(units[r], unit));
      if (!matched_units.back()) {
        result.unmatched.push_back("scenario '" + unit + "'" +
                                   where(*runs[r], r >= baseline.size()));
        complete = false;
      }
    }
    if (!complete) continue;
    std::vector<std::vector<MetricSeries>> series;
    for (const auto* scenarios : matched_units)
      series.push_back(pooled_series(*scenarios, options.clock));
    for (const MetricSeries& b : series.front()) {
      std::vector<const std::vector<double>*> matched;
      bool all = true;
      for (std::size_t r = 0; r < runs.size(); ++r) {
        const MetricSeries* m = r == 0 ? &b : find_metric(series[r], b);
        if (!m) {
          result.unmatched.push_back("'" + unit + "' / '" + b.workload + "' " + metric_name(b) +
                                     where(*runs[r], r >= baseline.size()));
          all = false;
          continue;
        }
        matched.push_back(&m->values_us);
      }
      if (!all) continue;
      CompareRow row{unit, b.workload, metric_name(b),    CompareSection::workloads, {},
                     {},   {},         CompareOutcome::ok};
      const auto split = matched.begin() + static_cast<long>(baseline.size());
      if (result.method == CompareMethod::runs)
        judge_by_runs(row, {matched.begin(), split}, {split, matched.end()}, kWorkloadPercentiles);
      else
        judge_by_frames(row, *matched[0], *matched[1], kWorkloadPercentiles, options.resamples);
      judge_verdict(row, result.threshold_pct, options.min_change_us);
      result.rows.push_back(std::move(row));
    }
    if (has_game_frame(*reference_scenarios.front())) {
      std::vector<FrameSample> samples;
      for (const auto* scenarios : matched_units) samples.push_back(frame_sample(*scenarios));
      compare_frames(unit, samples, baseline.size(), result, options,
                     [&](std::size_t r, const std::string& what) {
                       result.unmatched.push_back("'" + unit + "' / " + what +
                                                  where(*runs[r], r >= baseline.size()));
                     });
    }
  }
  for (const CompareRow& row : result.rows)
    result.changed = result.changed || row.outcome != CompareOutcome::ok;
  compare_decisions(baseline, candidate, result);
  return result;
}

std::string_view to_string(CompareOutcome outcome) {
  return name_of(kCompareOutcomeNames, outcome);
}

namespace {

std::string percent_change(double base, double cand) {
  return std::abs(base) < 1e-9 ? std::string("-")
                               : fmt::format("{:+.1f}", (cand - base) / std::abs(base) * 100.0);
}

std::string verdict_text(const CompareRow& r) {
  return r.outcome == CompareOutcome::ok ? "ok" : "CHANGED: " + std::string(to_string(r.outcome));
}

std::string decision_text(const std::optional<Decision>& d) {
  return d ? std::string(to_string(*d)) : std::string("none");
}

// "intrusive (4 of 5 runs)", or the one run's decision.
std::string side_decision(const std::vector<std::optional<Decision>>& runs,
                          const std::optional<Decision>& mode) {
  if (runs.size() == 1) return decision_text(mode);
  return fmt::format("{} ({} of {} runs)", decision_text(mode),
                     std::count(runs.begin(), runs.end(), mode), runs.size());
}

}  // namespace

std::string compare_table(const CompareResult& result, const CompareOptions& options) {
  std::string out;
  if (!result.baseline_platform.empty())
    out += fmt::format("baseline:  {}\ncandidate: {}\n", result.baseline_platform,
                       result.candidate_platform);
  if (result.different_apis)
    out +=
        "the two sides ran on different APIs: a difference is the APIs' and their drivers' as "
        "much as the workload's\n";
  if (!out.empty()) out += "\n";
  out += fmt::format("{:<24} {:<20} {:<18} {:>10} {:>10} {:>8} {:>10} {:>10} {:>8}  {}\n",
                     "scenario", "workload", "metric", "base p50", "cand p50", "p50 %", "base p95",
                     "cand p95", "p95 %", "verdict");
  std::size_t changed = 0;
  bool frame_rows = false;
  for (const CompareRow& r : result.rows) {
    changed += r.outcome != CompareOutcome::ok;
    if (r.section != CompareSection::workloads) {
      frame_rows = true;
      continue;
    }
    out += fmt::format(
        "{:<24} {:<20} {:<18} {:>10.1f} {:>10.1f} {:>8} {:>10.1f} {:>10.1f} {:>8}  {}\n",
        r.scenario, r.workload, r.metric, r.baseline[0], r.candidate[0],
        percent_change(r.baseline[0], r.candidate[0]), r.baseline[1], r.candidate[1],
        percent_change(r.baseline[1], r.candidate[1]), verdict_text(r));
  }
  if (frame_rows) {
    // What a player feels, apart: its tail is the p99, and two of its rows are shares.
    out += fmt::format(
        "\nframes (what a player feels): p50 and p99 in µs; late frames and stutters in % of "
        "frames, their change in points\n{:<24} {:<39} {:>10} {:>10} {:>8} {:>10} {:>10} {:>8}  "
        "{}\n",
        "scenario", "metric", "base p50", "cand p50", "p50 %", "base p99", "cand p99", "p99 %",
        "verdict");
    for (const CompareRow& r : result.rows) {
      if (r.section == CompareSection::frames)
        out += fmt::format(
            "{:<24} {:<39} {:>10.1f} {:>10.1f} {:>8} {:>10.1f} {:>10.1f} {:>8}  {}\n", r.scenario,
            r.metric, r.baseline[0], r.candidate[0], percent_change(r.baseline[0], r.candidate[0]),
            r.baseline[1], r.candidate[1], percent_change(r.baseline[1], r.candidate[1]),
            verdict_text(r));
      else if (r.section == CompareSection::frame_share)
        out += fmt::format("{:<24} {:<39} {:>9.1f}% {:>9.1f}% {:>8} {:>10} {:>10} {:>8}  {}\n",
                           r.scenario, r.metric, r.baseline[0], r.candidate[0],
                           fmt::format("{:+.1f}pt", r.candidate[0] - r.baseline[0]), "", "", "",
                           verdict_text(r));
    }
  }
  if (!result.decision_changes.empty()) {
    out += "\nstudy decisions that differ (verdict.json):\n";
    for (const DecisionChange& d : result.decision_changes)
      out += fmt::format("{:<24} {:<20} baseline {}, candidate {}  {}\n", d.study, d.condition,
                         side_decision(d.baseline, d.baseline_mode),
                         side_decision(d.candidate, d.candidate_mode),
                         d.gates ? "CHANGED" : "moved (not a decided call on both sides)");
  }
  for (const std::string& u : result.unmatched) out += "missing: " + u + "\n";
  out += fmt::format(
      "\n{} of {} metrics changed beyond {:.1f}% (and {:.1f} µs{}); {} clock; times "
      "in µs\n",
      changed, result.rows.size(), result.threshold_pct, options.min_change_us,
      frame_rows
          ? fmt::format(", {:.1f} points for a share of frames", options.min_change_share_pct)
          : std::string(),
      to_string(options.clock));
  const std::size_t gating = static_cast<std::size_t>(
      std::count_if(result.decision_changes.begin(), result.decision_changes.end(),
                    [](const DecisionChange& d) { return d.gates; }));
  if (!result.decision_changes.empty())
    out += fmt::format(
        "{} study condition(s) changed decision ({} between non-intrusive and "
        "intrusive, which fails the gate)\n",
        result.decision_changes.size(), gating);
  if (result.method == CompareMethod::runs)
    out += fmt::format(
        "method: runs ({} baseline, {} candidate). Each run gives one p50 and one p95 per metric "
        "(p99 for a frame's, one share for late frames and stutters); "
        "CHANGED means every candidate run lies beyond every baseline run by more than the "
        "threshold. Values are the medians over each side's runs. Without a change, a metric "
        "separates by chance with probability at most {:.2g}% (2 / C({}, {}), before the "
        "threshold).\n",
        result.baseline_runs, result.candidate_runs, 100.0 * result.chance_per_metric,
        result.baseline_runs + result.candidate_runs, result.candidate_runs);
  else
    out +=
        "method: frames (one run per side): 95% bootstrap intervals over frames. They cannot see "
        "how runs of one configuration differ (a schedule or a p95 that changes from run to run): "
        "for a gate, give several runs per side (--baseline DIR... --candidate DIR..., 5 each, "
        "interleaved).\n";
  for (const std::string& w : result.warnings) out += "warning: " + w + "\n";
  return out;
}

std::string compare_csv(const CompareResult& result) {
  std::string out = csv_line(kCompareColumns);
  for (const CompareRow& r : result.rows) {
    const bool share = r.section == CompareSection::frame_share;
    const auto upper = [&](double v) { return share ? std::string() : fmt::format("{:.3f}", v); };
    out += fmt::format("{},{},{},{:.3f},{:.3f},{:.3f},{:.3f},{},{},{},{},{},{},{}\n",
                       csv_field(r.scenario), csv_field(r.workload), csv_field(r.metric),
                       r.baseline[0], r.candidate[0], r.difference[0].low, r.difference[0].high,
                       upper(r.baseline[1]), upper(r.candidate[1]), upper(r.difference[1].low),
                       upper(r.difference[1].high), to_string(r.outcome),
                       name_of(kCompareSectionNames, r.section),
                       share                                 ? ""
                       : r.section == CompareSection::frames ? "99"
                                                             : "95");
  }
  return out;
}

}  // namespace gpuoverlap
