#include "preemption/load_calibration.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "workloads/workload.h"

namespace gpuoverlap::preemption {

namespace {

std::uint32_t& value_of(LoadSize& size, Dimension d) {
  switch (d) {
    case Dimension::groups:
      return size.groups;
    case Dimension::iterations:
      return size.iterations;
    case Dimension::draws:
      return size.draws;
  }
  return size.groups;
}

std::uint32_t value_of(const LoadSize& size, Dimension d) {
  return value_of(const_cast<LoadSize&>(size), d);
}

// The first probe is measured twice (the first run of a pipeline may include one-time costs);
// growing stops once a probe reaches this share of the target.
constexpr double kLinearRegion = 0.5;
constexpr double kMaxGrowthPerProbe = 16;
constexpr int kMaxProbes = 24;

}  // namespace

std::vector<PartPlan> plan_parts(const PreemptionSpec& spec, std::uint32_t max_groups) {
  max_groups = std::clamp<std::uint32_t>(max_groups, 1, kMaxComputeGroups);
  auto compute_part = [&](bool slow) {
    PartPlan p;
    p.start = {.groups = spec.groups.value_or(1), .iterations = spec.iterations.value_or(1)};
    p.bounds = {.groups = slow ? p.start.groups : max_groups, .iterations = kMaxLoadIterations};
    if (!slow && !spec.groups) p.growth.push_back(Dimension::groups);
    if (!spec.iterations) p.growth.push_back(Dimension::iterations);
    return p;
  };
  auto graphics_part = [&] {
    PartPlan p;
    p.start = {.groups = 0,
               .iterations = spec.iterations.value_or(1),
               .draws = spec.draws.value_or(1),
               .rows = kDrawRows};
    p.bounds = {
        .groups = 0, .iterations = kMaxLoadIterations, .draws = kMaxDraws, .rows = kDrawRows};
    if (!spec.draws) p.growth.push_back(Dimension::draws);
    if (!spec.iterations) p.growth.push_back(Dimension::iterations);
    return p;
  };
  switch (spec.load) {
    case LoadKind::big_dispatch:
      return {compute_part(false)};
    case LoadKind::slow_shader:
      return {compute_part(true)};
    case LoadKind::many_draws:
      return {graphics_part()};
    case LoadKind::graphics_and_compute:
      return {graphics_part(), compute_part(false)};
  }
  return {};
}

double part_target_ms(const PreemptionSpec& spec) {
  return spec.load == LoadKind::graphics_and_compute ? spec.target_ms / 2 : spec.target_ms;
}

double scale_size(LoadSize& size, const PartPlan& plan, double factor) {
  double applied = 1;
  if (factor > 1) {
    for (Dimension d : plan.growth) {
      std::uint32_t& v = value_of(size, d);
      const double wanted = std::min<double>(value_of(plan.bounds, d), std::round(v * factor));
      const auto next = static_cast<std::uint32_t>(std::max<double>(v, wanted));
      const double step = static_cast<double>(next) / v;
      applied *= step;
      factor /= step;
      v = next;
      if (factor < 1.01) break;
    }
  } else if (factor < 1) {
    for (auto it = plan.growth.rbegin(); it != plan.growth.rend(); ++it) {
      std::uint32_t& v = value_of(size, *it);
      const auto next = static_cast<std::uint32_t>(std::max(1.0, std::round(v * factor)));
      const double step = static_cast<double>(next) / v;
      applied *= step;
      factor /= step;
      v = next;
      if (factor > 0.99) break;
    }
  }
  return applied;
}

Result<PartCalibration> calibrate_part(const PartPlan& plan, double target_ms,
                                       const MeasureLoadMs& measure) {
  PartCalibration out;
  out.size = plan.start;
  auto probe = [&](const LoadSize& size) -> Result<double> {
    auto ms = measure(size);
    if (!ms) return ms.error().with_context("calibrating " + describe(size) + ": ");
    out.probes.emplace_back(size, *ms);
    return ms;
  };
  auto first = probe(out.size);
  if (!first) return first.error();
  if (plan.growth.empty()) return out;  // sized explicitly: measured once, for the record
  auto ms = probe(out.size);
  if (!ms) return ms.error();
  double measured = *ms;
  for (int i = 0; i < kMaxProbes && measured < kLinearRegion * target_ms; ++i) {
    const double factor = std::clamp(target_ms / std::max(measured, 1e-3), 2.0, kMaxGrowthPerProbe);
    if (scale_size(out.size, plan, factor) <= 1.0) break;  // every dimension at its bound
    ms = probe(out.size);
    if (!ms) return ms.error();
    measured = *ms;
  }
  const double wanted = target_ms / std::max(measured, 1e-3);
  if (std::abs(wanted - 1) > 0.05) {
    scale_size(out.size, plan, wanted);
    ms = probe(out.size);
    if (!ms) return ms.error();
    measured = *ms;
  }
  out.reached_target = measured >= 0.5 * target_ms && measured <= 2 * target_ms;
  if (!out.reached_target)
    out.note = fmt::format("{} ran {:.1f} ms for a target of {:.1f} ms{}", describe(out.size),
                           measured, target_ms,
                           measured < target_ms ? " (its size bounds stop it short)"
                                                : " (the smallest size is slower than the target)");
  return out;
}

}  // namespace gpuoverlap::preemption
