// A paced frame's figures: the late line's tolerance, pacing over a condition's frames (late
// frames, stutters, the time-weighted 1 % low), the period effects are shares of, and the
// pacing in words.
#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include "analysis/verdict_internal.h"
#include "timeline/statistics.h"

namespace gpuoverlap {

double late_tolerance_us(double period_us,
                         const std::vector<std::vector<double>>& baseline_rounds_interval_us,
                         const std::optional<double>& setting_us) {
  if (setting_us) return *setting_us;
  double tolerance_us = 0.05 * period_us;
  std::vector<double> round_p95_us;
  for (const std::vector<double>& round : baseline_rounds_interval_us)
    if (const auto p95 = percentile(round, 95)) round_p95_us.push_back(*p95);
  if (const auto p95 = percentile(round_p95_us, 50))
    tolerance_us = std::max(tolerance_us, *p95 - period_us);
  // Never past the stutter line: a baseline that cannot keep its pace has every frame late.
  return std::min(tolerance_us, 0.5 * period_us);
}

PacingSummary pacing_summary(const std::vector<double>& interval_us, double late_line_us,
                             double stutter_line_us) {
  PacingSummary p;
  p.frames = interval_us.size();
  if (interval_us.empty()) return p;
  p.late = static_cast<std::size_t>(std::count_if(interval_us.begin(), interval_us.end(),
                                                  [&](double v) { return v > late_line_us; }));
  p.stutters = static_cast<std::size_t>(std::count_if(
      interval_us.begin(), interval_us.end(), [&](double v) { return v > stutter_line_us; }));
  p.interval_p50_us = *percentile(interval_us, 50);
  std::vector<double> sorted = interval_us;
  std::sort(sorted.begin(), sorted.end(), std::greater<>());
  double total_us = 0;
  for (double v : sorted) total_us += v;
  double slowest_us = 0;
  for (double v : sorted) {
    slowest_us += v;
    if (slowest_us >= 0.01 * total_us) {
      if (v > 0) p.one_percent_low_fps = 1e6 / v;
      break;
    }
  }
  return p;
}

namespace verdict_internal {

std::optional<double> frame_period_us(const Scenario& s, const Samples& baseline) {
  if (s.cpu && s.cpu->frame_period_ms > 0) return s.cpu->frame_period_ms * 1000.0;
  for (const auto& [name, values] : baseline)
    if (name == "frame_interval_us" && !values.empty()) return percentile(values, 50);
  return std::nullopt;
}

std::string describe_pacing(const PacingSummary& p, const PacingSummary& baseline,
                            double late_line_us) {
  return fmt::format(
      "{} of {} frames late (beyond {:.2f} ms; baseline {} of {}), {} stutter{} ({}), frame "
      "interval p50 {:.0f} µs ({:.0f}), 1 % low {:.0f} fps ({:.0f})",
      p.late, p.frames, late_line_us / 1000.0, baseline.late, baseline.frames, p.stutters,
      p.stutters == 1 ? "" : "s", baseline.stutters, p.interval_p50_us, baseline.interval_p50_us,
      p.one_percent_low_fps, baseline.one_percent_low_fps);
}

}  // namespace verdict_internal

}  // namespace gpuoverlap
