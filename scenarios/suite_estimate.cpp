#include "scenarios/suite_estimate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace gpuoverlap {

namespace {

// A calibration grows the load at most 16x per probe from a tiny size: a handful of probes,
// the last ones near the target.
constexpr double kCalibrationTargets = 3;

}  // namespace

SuiteEstimate::SuiteEstimate(const std::vector<Scenario>& scenarios,
                             const std::vector<FramesToRun>& frames_each) {
  for (std::size_t i = 0; i < scenarios.size(); ++i) {
    const Scenario& s = scenarios[i];
    Cost cost;
    cost.study = s.study;
    cost.study_budget_s = s.rounds > 1 ? s.study_budget_s : 0;
    const FramesToRun frames = i < frames_each.size() ? frames_each[i] : FramesToRun{};
    if (s.preemption) {
      const auto& p = *s.preemption;
      cost.kind = kPreemption;
      cost.units = (p.duration_ms + (p.baseline_loads + kCalibrationTargets) * p.target_ms) / 1000;
    } else if (s.cpu && s.cpu->frame_period_ms > 0) {
      const double period_ms = s.cpu->frame_period_ms;
      double measured_ms = frames.measured * period_ms;
      if (!s.study.empty() && s.study_round_ms > 0)
        measured_ms = std::min(measured_ms, double(s.study_round_ms));
      cost.kind = kPaced;
      cost.units = (frames.warmup * period_ms + measured_ms) / 1000;
    } else {
      cost.units = double(frames.warmup) + frames.measured;
    }
    costs_.push_back(cost);
  }
  seconds_each_.assign(costs_.size(), std::nan(""));
}

void SuiteEstimate::finished(std::size_t index, double seconds) {
  if (index >= costs_.size()) return;
  seconds_[costs_[index].kind] += seconds;
  units_[costs_[index].kind] += costs_[index].units;
  seconds_each_[index] = seconds;
}

double SuiteEstimate::cost_s(std::size_t index) const {
  const Cost& c = costs_[index];
  if (units_[c.kind] == 0)  // a prediction, uncorrected; frames have none
    return c.kind == kFrames ? std::nan("") : c.units;
  return c.units * seconds_[c.kind] / units_[c.kind];
}

std::optional<double> SuiteEstimate::remaining_s(std::size_t next) const {
  double total = 0;
  for (std::size_t i = next; i < costs_.size(); ++i) {
    const double s = cost_s(i);
    if (std::isnan(s)) return std::nullopt;
    total += s;
  }
  return total;
}

std::optional<double> SuiteEstimate::remaining_at_most_s(std::size_t next) const {
  std::optional<double> total = remaining_s(next);
  if (!total) return total;
  // Per study that has scenarios left: its budget beyond what it has spent and will spend as
  // planned.
  std::map<std::string, double> spent, planned, budget;
  for (std::size_t i = 0; i < costs_.size(); ++i) {
    const Cost& c = costs_[i];
    if (c.study.empty() || c.study_budget_s <= 0) continue;
    budget[c.study] = c.study_budget_s;
    if (i < next)
      spent[c.study] += std::isnan(seconds_each_[i]) ? 0 : seconds_each_[i];
    else
      planned[c.study] += cost_s(i);
  }
  for (const auto& [study, left] : planned)
    *total += std::max(0.0, budget[study] - spent[study] - left);
  return total;
}

std::string format_duration(double seconds) {
  const long s = std::lround(std::max(seconds, 0.0));
  if (s < 60) return fmt::format("{} s", s);
  if (s < 3600) return fmt::format("{} min {} s", s / 60, s % 60);
  return fmt::format("{} h {} min", s / 3600, (s % 3600) / 60);
}

std::uint64_t estimated_results_bytes(const std::vector<Scenario>& scenarios) {
  std::uint64_t bytes = 4ull << 20;
  for (const Scenario& s : scenarios)
    bytes += (256ull << 10) + std::uint64_t{1024} * std::max<std::size_t>(1, s.workloads.size()) *
                                  (std::uint64_t{s.frames} + s.warmup_frames);
  return bytes;
}

}  // namespace gpuoverlap
