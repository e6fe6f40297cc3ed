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

CompareResult compare_runs(const LoadedRun& baseline, const LoadedRun& candidate,
                           const CompareOptions& options) {
  CompareResult result;
  if (!baseline.scenarios.empty() && !candidate.scenarios.empty()) {
    const nlohmann::json& base_meta = baseline.scenarios.front().meta;
    const nlohmann::json& cand_meta = candidate.scenarios.front().meta;
    result.baseline_platform = platform_of(base_meta);
    result.candidate_platform = platform_of(cand_meta);
    result.different_apis = api_of(base_meta) != api_of(cand_meta);
  }
  constexpr double kPercentiles[2] = {50.0, 95.0};
  for (const LoadedScenario& base : baseline.scenarios) {
    const LoadedScenario* cand = find_scenario(candidate, base.name);
    if (!cand) {
      result.unmatched.push_back("scenario '" + base.name + "'");
      continue;
    }
    const auto cand_series = metric_series(*cand, options.clock);
    for (const MetricSeries& b : metric_series(base, options.clock)) {
      const auto c =
          std::find_if(cand_series.begin(), cand_series.end(), [&](const MetricSeries& m) {
            return m.workload == b.workload && m.metric == b.metric && m.producer == b.producer;
          });
      if (c == cand_series.end()) {
        result.unmatched.push_back("'" + base.name + "' / '" + b.workload + "' " + metric_name(b));
        continue;
      }
      CompareRow row{base.name, b.workload, metric_name(b), {}, {}, {}, "ok"};
      for (int i = 0; i < 2; ++i) {
        row.baseline[i] = *percentile(b.values_us, kPercentiles[i]);
        row.candidate[i] = *percentile(c->values_us, kPercentiles[i]);
        row.difference[i] = bootstrap_percentile_difference(b.values_us, c->values_us,
                                                            kPercentiles[i], options.resamples);
        const double allowed = std::max(options.threshold_pct / 100.0 * std::abs(row.baseline[i]),
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
  for (const std::string& u : result.unmatched) out += "missing in the candidate: " + u + "\n";
  out += fmt::format(
      "\n{} of {} metrics changed beyond {:.1f}% (and {:.1f} µs) with 95% bootstrap confidence; "
      "{} clock; times in µs\n",
      changed, result.rows.size(), options.threshold_pct, options.min_change_us,
      to_string(options.clock));
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
