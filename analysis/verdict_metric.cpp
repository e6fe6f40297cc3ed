// The endpoint tests of one metric of one condition: per unit, the median's ratio and the tail's
// excess beyond the other units' p99; their one-sided Student's t bounds over the units; the call.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "analysis/student_t.h"
#include "analysis/verdict_internal.h"
#include "timeline/statistics.h"

namespace gpuoverlap::verdict_internal {

namespace {

double share_beyond(const std::vector<double>& values, double threshold) {
  if (values.empty()) return 0;
  return static_cast<double>(
             std::count_if(values.begin(), values.end(), [&](double v) { return v > threshold; })) /
         static_cast<double>(values.size());
}

}  // namespace

VerdictRow judge_metric(const std::string& condition, const Endpoint& endpoint,
                        std::size_t metric_index, const std::vector<double>& baseline,
                        const std::vector<double>& sample, const std::vector<Unit>& units,
                        std::size_t tests, const VerdictSettings& settings) {
  VerdictRow row;
  row.condition = condition;
  row.metric = endpoint.metric;
  row.role = endpoint.primary ? EndpointRole::primary : EndpointRole::diagnostic;
  row.tests = endpoint.median && endpoint.tail ? EndpointTests::median_and_tail
              : endpoint.median                ? EndpointTests::median
                                               : EndpointTests::tail;
  row.frames = sample.size();
  row.baseline_frames = baseline.size();
  if (!baseline.empty()) row.baseline_p50 = *percentile(baseline, 50);
  if (!sample.empty()) row.p50 = *percentile(sample, 50);
  if (baseline.size() < settings.min_frames || sample.size() < settings.min_frames) {
    row.decision = endpoint.primary ? Decision::inconclusive : Decision::diagnostic_unclear;
    row.note = fmt::format("too few frames ({} and {}; at least {} each)", baseline.size(),
                           sample.size(), settings.min_frames);
    return row;
  }
  row.baseline_p99 = *percentile(baseline, 99);
  row.p99 = *percentile(sample, 99);
  if (row.baseline_p99 > 0) row.ratio_p99 = row.p99 / row.baseline_p99;
  // A unit's tail threshold is the p99 of the baseline's frames in every *other* unit, plus
  // the median's margins: a shift the median's margin allows (3 % on a metric whose frames
  // vary by 1 %) must not count as a tail, nor 0.5 µs on a metric that is constant in the
  // baseline (a 1 µs poll gap). Drift between units still cancels in the difference of the
  // two shares, both measured against the same threshold.
  // Not the unit's own baseline p99: that is biased. The baseline can never exceed its own
  // p99 by much, while a condition drawn from the same distribution, in a block whose host
  // state differs, often does. On the H100, baseline rounds compared with the next baseline
  // round (an A/A test) gave +0.2 to +1.2 points with 500-frame rounds and +3 to +5 with
  // 100-frame rounds. With a threshold from the other units, the two sides are exchangeable
  // when nothing differs, and the same A/A tests gave -0.2 to +0.04 points.
  std::vector<double> log_ratios, excesses, rates, baseline_rates;
  // Sorted once: a unit's threshold then walks only the top of them (percentile_without),
  // where copying the other units' frames for each unit grew with the square of the rounds.
  std::vector<std::vector<double>> sorted_baselines;
  std::vector<double> all_baseline;
  for (const Unit& u : units) {
    sorted_baselines.push_back(u.baseline[metric_index].second);
    std::sort(sorted_baselines.back().begin(), sorted_baselines.back().end());
    all_baseline.insert(all_baseline.end(), sorted_baselines.back().begin(),
                        sorted_baselines.back().end());
  }
  std::sort(all_baseline.begin(), all_baseline.end());
  for (std::size_t i = 0; i < units.size(); ++i) {
    const std::vector<double>& b = units[i].baseline[metric_index].second;
    const std::vector<double>& c = units[i].condition[metric_index].second;
    if (b.size() < settings.min_unit_frames || c.size() < settings.min_unit_frames) continue;
    const std::optional<double> others_p99 =
        percentile_without(all_baseline, sorted_baselines[i], 99);
    const double threshold =
        endpoint.tail_threshold_us
            ? *endpoint.tail_threshold_us
            : (others_p99 ? *others_p99 : *percentile(b, 99)) * (1 + settings.p50_margin) +
                  settings.min_difference_us;
    rates.push_back(share_beyond(c, threshold));
    baseline_rates.push_back(share_beyond(b, threshold));
    excesses.push_back(rates.back() - baseline_rates.back());
    const double b50 = *percentile(b, 50), c50 = *percentile(c, 50);
    if (b50 > 0 && c50 > 0) log_ratios.push_back(std::log(c50 / b50));
  }
  row.units = excesses.size();
  // A tail-only endpoint may have medians of 0 (poll_disturbed): it needs no ratios.
  if (excesses.size() < settings.min_units ||
      (endpoint.median && log_ratios.size() < settings.min_units)) {
    row.decision = endpoint.primary ? Decision::inconclusive : Decision::diagnostic_unclear;
    row.note =
        fmt::format("{} units with at least {} frames on both sides{}; at least {} are needed",
                    excesses.size(), settings.min_unit_frames,
                    log_ratios.size() < excesses.size() ? " (some with a median of 0)" : "",
                    settings.min_units);
    return row;
  }
  const SampleSpread median = sample_spread(log_ratios), tail = sample_spread(excesses);
  row.tail_rate = sample_spread(rates).mean;
  row.baseline_tail_rate = sample_spread(baseline_rates).mean;
  // One-sided bounds: the lower at 1 - alpha / K (an intrusion call), the upper at 1 - alpha
  // (a non-intrusion call; see VerdictSettings::alpha).
  auto t_low = [&](const SampleSpread& s) {
    return student_t_quantile_upper(settings.alpha / static_cast<double>(tests),
                                    static_cast<double>(s.n - 1));
  };
  auto t_high = [&](const SampleSpread& s) {
    return student_t_quantile_upper(settings.alpha, static_cast<double>(s.n - 1));
  };
  const bool has_ratios = log_ratios.size() >= std::max<std::size_t>(1, settings.min_units);
  if (has_ratios) {
    row.ratio_p50 = std::exp(median.mean);
    row.ci_low = std::exp(median.mean - t_low(median) * median.standard_error);
    row.ci_high = std::exp(median.mean + t_high(median) * median.standard_error);
    row.detectable_ratio =
        std::exp(std::log1p(settings.p50_margin) + t_low(median) * median.standard_error);
  }
  row.detectable_tail = std::min(1.0, settings.tail_margin + t_low(tail) * tail.standard_error);
  row.tail_excess = tail.mean;
  row.tail_ci_low = tail.mean - t_low(tail) * tail.standard_error;
  row.tail_ci_high = tail.mean + t_high(tail) * tail.standard_error;

  if (has_ratios) row.effect_us = (*row.ratio_p50 - 1) * row.baseline_p50;
  const double p50_diff_low = has_ratios ? (*row.ci_low - 1) * row.baseline_p50 : 0;
  const double p50_diff_high = has_ratios ? (*row.ci_high - 1) * row.baseline_p50 : 0;
  // A test the endpoint does not make is neither worse nor in the way of a fine call.
  const bool p50_worse = endpoint.median && *row.ci_low > 1 + settings.p50_margin &&
                         p50_diff_low > settings.min_difference_us;
  const bool tail_worse = endpoint.tail && *row.tail_ci_low > settings.tail_margin;
  const bool p50_fine = !endpoint.median || *row.ci_high <= 1 + settings.p50_margin ||
                        p50_diff_high <= settings.min_difference_us;
  const bool tail_fine = !endpoint.tail || *row.tail_ci_high <= settings.tail_margin;
  if (p50_worse || tail_worse) {
    row.decision = Decision::intrusive;
    row.note = p50_worse && tail_worse ? "median and tail worse"
               : p50_worse             ? "median worse"
               : endpoint.tail_threshold_us
                   ? (*endpoint.tail_threshold_us >= 1
                          ? fmt::format("more frames {} (beyond {:.0f} µs)", endpoint.beyond,
                                        *endpoint.tail_threshold_us)
                          : fmt::format("more frames {}", endpoint.beyond))
                   : "more frames beyond the baseline's p99";
  } else if (p50_fine && tail_fine) {
    row.decision = Decision::non_intrusive;
  } else {
    row.decision = Decision::inconclusive;
    row.note = !p50_fine ? "the median's bound reaches past the margin"
                         : "the tail's bound reaches past the margin";
  }
  if (!endpoint.primary) {
    // A diagnostic says how it moved; it never decides.
    row.decision = row.decision == Decision::intrusive       ? Decision::diagnostic_worse
                   : row.decision == Decision::non_intrusive ? Decision::diagnostic_within
                                                             : Decision::diagnostic_unclear;
    if (row.decision == Decision::diagnostic_worse)
      row.note = fmt::format("moved ({}); a diagnostic does not decide", row.note);
  }
  return row;
}

}  // namespace gpuoverlap::verdict_internal
