#include "analysis/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "timeline/export.h"
#include "timeline/statistics.h"

namespace gpuoverlap {

namespace {

std::string metric_name(const MetricSeries& m) {
  return m.metric == "gap" ? "gap <- " + m.producer : m.metric;
}

const LoadedScenario* find_scenario(const LoadedRun& run, const std::string& name) {
  for (const auto& s : run.scenarios)
    if (s.name == name) return &s;
  return nullptr;
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

namespace {

constexpr double kPercentiles[2] = {50.0, 95.0};

const MetricSeries* find_metric(const std::vector<MetricSeries>& series, const MetricSeries& m) {
  const auto it = std::find_if(series.begin(), series.end(), [&](const MetricSeries& s) {
    return s.workload == m.workload && s.metric == m.metric && s.producer == m.producer;
  });
  return it == series.end() ? nullptr : &*it;
}

double median_of(std::vector<double> values) { return *percentile(values, 50.0); }

// The runs method's row: each run reduced to its own p50 and p95 first.
void judge_by_runs(CompareRow& row, const std::vector<const MetricSeries*>& baseline,
                   const std::vector<const MetricSeries*>& candidate) {
  for (int i = 0; i < 2; ++i) {
    std::vector<double> base, cand;
    for (const MetricSeries* m : baseline)
      base.push_back(*percentile(m->values_us, kPercentiles[i]));
    for (const MetricSeries* m : candidate)
      cand.push_back(*percentile(m->values_us, kPercentiles[i]));
    row.baseline[i] = median_of(base);
    row.candidate[i] = median_of(cand);
    const auto [base_low, base_high] = std::minmax_element(base.begin(), base.end());
    const auto [cand_low, cand_high] = std::minmax_element(cand.begin(), cand.end());
    row.difference[i] = {*cand_low - *base_high, *cand_high - *base_low};
  }
}

void judge_by_frames(CompareRow& row, const MetricSeries& baseline, const MetricSeries& candidate,
                     int resamples) {
  for (int i = 0; i < 2; ++i) {
    row.baseline[i] = *percentile(baseline.values_us, kPercentiles[i]);
    row.candidate[i] = *percentile(candidate.values_us, kPercentiles[i]);
    row.difference[i] = bootstrap_percentile_difference(baseline.values_us, candidate.values_us,
                                                        kPercentiles[i], resamples);
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
    const nlohmann::json& base_meta = reference.scenarios.front().meta;
    const nlohmann::json& cand_meta = candidate.front().scenarios.front().meta;
    result.baseline_platform = platform_of(base_meta);
    result.candidate_platform = platform_of(cand_meta);
    result.different_apis = api_of(base_meta) != api_of(cand_meta);
    check_one_platform(baseline, "baseline", result.baseline_platform, result.warnings);
    check_one_platform(candidate, "candidate", result.candidate_platform, result.warnings);
  }
  for (const LoadedScenario& base : reference.scenarios) {
    // Every run's series of this scenario, baseline runs first; a run without it is reported.
    std::vector<const LoadedRun*> runs;
    for (const LoadedRun& r : baseline) runs.push_back(&r);
    for (const LoadedRun& r : candidate) runs.push_back(&r);
    std::vector<std::vector<MetricSeries>> series(runs.size());
    bool complete = true;
    for (std::size_t r = 0; r < runs.size(); ++r) {
      const LoadedScenario* s = find_scenario(*runs[r], base.name);
      if (!s) {
        result.unmatched.push_back("scenario '" + base.name + "'" +
                                   where(*runs[r], r >= baseline.size()));
        complete = false;
        continue;
      }
      series[r] = metric_series(*s, options.clock);
    }
    if (!complete) continue;
    for (const MetricSeries& b : series.front()) {
      std::vector<const MetricSeries*> matched;
      for (std::size_t r = 0; r < runs.size(); ++r) {
        const MetricSeries* m = r == 0 ? &b : find_metric(series[r], b);
        if (!m)
          result.unmatched.push_back("'" + base.name + "' / '" + b.workload + "' " +
                                     metric_name(b) + where(*runs[r], r >= baseline.size()));
        matched.push_back(m);
      }
      if (std::find(matched.begin(), matched.end(), nullptr) != matched.end()) continue;
      CompareRow row{base.name, b.workload, metric_name(b), {}, {}, {}, "ok"};
      if (result.method == CompareMethod::runs)
        judge_by_runs(row, {matched.begin(), matched.begin() + baseline.size()},
                      {matched.begin() + baseline.size(), matched.end()});
      else
        judge_by_frames(row, *matched[0], *matched[1], options.resamples);
      for (int i = 0; i < 2; ++i) {
        const double allowed = std::max(result.threshold_pct / 100.0 * std::abs(row.baseline[i]),
                                        options.min_change_us);
        if (row.difference[i].low > allowed) row.verdict = "slower";
        if (row.difference[i].high < -allowed && row.verdict == "ok") row.verdict = "faster";
      }
      result.changed = result.changed || row.verdict != "ok";
      result.rows.push_back(std::move(row));
    }
  }
  return result;
}

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
  auto pct = [](double base, double cand) {
    return std::abs(base) < 1e-9 ? std::string("-")
                                 : fmt::format("{:+.1f}", (cand - base) / std::abs(base) * 100.0);
  };
  std::size_t changed = 0;
  for (const CompareRow& r : result.rows) {
    changed += r.verdict != "ok";
    out += fmt::format(
        "{:<24} {:<20} {:<18} {:>10.1f} {:>10.1f} {:>8} {:>10.1f} {:>10.1f} {:>8}  {}\n",
        r.scenario, r.workload, r.metric, r.baseline[0], r.candidate[0],
        pct(r.baseline[0], r.candidate[0]), r.baseline[1], r.candidate[1],
        pct(r.baseline[1], r.candidate[1]), r.verdict == "ok" ? "ok" : "CHANGED: " + r.verdict);
  }
  for (const std::string& u : result.unmatched) out += "missing: " + u + "\n";
  out += fmt::format(
      "\n{} of {} metrics changed beyond {:.1f}% (and {:.1f} µs); {} clock; times "
      "in µs\n",
      changed, result.rows.size(), result.threshold_pct, options.min_change_us,
      to_string(options.clock));
  if (result.method == CompareMethod::runs)
    out += fmt::format(
        "method: runs ({} baseline, {} candidate). Each run gives one p50 and one p95 per metric; "
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
  std::string out =
      "scenario,workload,metric,baseline_p50_us,candidate_p50_us,diff_p50_low_us,diff_p50_high_us,"
      "baseline_p95_us,candidate_p95_us,diff_p95_low_us,diff_p95_high_us,verdict\n";
  for (const CompareRow& r : result.rows)
    out += fmt::format("{},{},{},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{}\n",
                       csv_field(r.scenario), csv_field(r.workload), csv_field(r.metric),
                       r.baseline[0], r.candidate[0], r.difference[0].low, r.difference[0].high,
                       r.baseline[1], r.candidate[1], r.difference[1].low, r.difference[1].high,
                       r.verdict);
  return out;
}

}  // namespace gpuoverlap
