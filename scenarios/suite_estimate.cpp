#include "scenarios/suite_estimate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace gpuoverlap {

namespace {

// A calibration grows the load at most 16x per probe from a tiny size: a handful of probes,
// the last ones near the target.
constexpr double kCalibrationTargets = 3;

}  // namespace

SuiteEstimate::SuiteEstimate(const std::vector<Scenario>& scenarios,
                             std::vector<std::uint32_t> frames_each) {
  for (std::size_t i = 0; i < scenarios.size(); ++i) {
    const Scenario& s = scenarios[i];
    if (s.preemption) {
      const auto& p = *s.preemption;
      costs_.push_back(
          {true, (p.duration_ms + (p.baseline_loads + kCalibrationTargets) * p.target_ms) / 1000});
    } else {
      costs_.push_back({false, i < frames_each.size() ? double(frames_each[i]) : 0});
    }
  }
}

void SuiteEstimate::finished(std::size_t index, double seconds) {
  if (index >= costs_.size()) return;
  const int kind = costs_[index].preemption ? 1 : 0;
  seconds_[kind] += seconds;
  units_[kind] += costs_[index].units;
}

std::optional<double> SuiteEstimate::remaining_s(std::size_t next) const {
  double total = 0;
  for (std::size_t i = next; i < costs_.size(); ++i) {
    const int kind = costs_[i].preemption ? 1 : 0;
    if (kind == 1 && units_[1] == 0) {
      total += costs_[i].units;  // the prediction itself, uncorrected
      continue;
    }
    if (units_[kind] == 0) return std::nullopt;
    total += costs_[i].units * seconds_[kind] / units_[kind];
  }
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
