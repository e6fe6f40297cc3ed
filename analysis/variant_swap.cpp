#include "analysis/variant_swap.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "analysis/student_t.h"
#include "timeline/statistics.h"

namespace gpuoverlap {

namespace {

double median_of(std::vector<double> values) { return *percentile(std::move(values), 50.0); }

// How a ratio's interval reads.
SwapCall call_of(double ratio_low, double ratio_high) {
  return ratio_high < 1.0  ? SwapCall::faster
         : ratio_low > 1.0 ? SwapCall::slower
                           : SwapCall::no_difference;
}

// The logs of the medians of `blocks` runs of consecutive values.
SampleSpread log_block_medians(const std::vector<double>& values, std::size_t blocks) {
  std::vector<double> logs;
  for (std::size_t k = 0; k < blocks; ++k) {
    const std::size_t from = k * values.size() / blocks, to = (k + 1) * values.size() / blocks;
    if (to <= from) continue;
    const double block_median = median_of({values.begin() + from, values.begin() + to});
    if (block_median > 0) logs.push_back(std::log(block_median));
  }
  return sample_spread(logs);
}

}  // namespace

std::optional<VariantSwap> judge_swap(const std::string& workload, Clock clock,
                                      const std::vector<SwapSample>& samples, std::size_t blocks) {
  if (samples.empty()) return std::nullopt;
  std::optional<std::uint32_t> first_swap;
  std::uint64_t last_variant = 0;
  for (const SwapSample& s : samples) {
    if (s.variant != 0 && !first_swap) first_swap = s.frame;
    if (s.variant != 0) last_variant = s.variant;
  }
  if (!first_swap) return std::nullopt;
  std::vector<double> before, after;
  for (const SwapSample& s : samples) {
    if (s.variant == 0 && s.frame < *first_swap) before.push_back(s.duration_us);
    if (s.variant == last_variant && s.frame >= *first_swap) after.push_back(s.duration_us);
  }
  if (before.empty() || after.empty()) return std::nullopt;
  VariantSwap swap;
  swap.workload = workload;
  swap.variant = last_variant;
  swap.clock = clock;
  swap.before_frames = before.size();
  swap.after_frames = after.size();
  swap.before_median_us = median_of(before);
  swap.after_median_us = median_of(after);
  swap.ratio = swap.before_median_us > 0 ? swap.after_median_us / swap.before_median_us : 1.0;
  // At least two frames per block, so a block's median is not one frame.
  const auto per_side = [&](std::size_t frames) { return std::min(blocks, frames / 2); };
  const SampleSpread b = log_block_medians(before, per_side(before.size()));
  const SampleSpread a = log_block_medians(after, per_side(after.size()));
  if (a.n < 2 || b.n < 2) {
    swap.call = SwapCall::too_few_frames;
    return swap;
  }
  // Welch's t: the two sides' block spreads may differ.
  const double va = a.variance / static_cast<double>(a.n),
               vb = b.variance / static_cast<double>(b.n);
  const double se = std::sqrt(va + vb);
  const double df =
      se > 0 ? (va + vb) * (va + vb) /
                   (va * va / static_cast<double>(a.n - 1) + vb * vb / static_cast<double>(b.n - 1))
             : static_cast<double>(a.n + b.n - 2);
  const double t = student_t_quantile_upper(0.025, std::max(1.0, df));
  const double centre = a.mean - b.mean;
  swap.ratio_low = std::exp(centre - t * se);
  swap.ratio_high = std::exp(centre + t * se);
  swap.call = call_of(*swap.ratio_low, *swap.ratio_high);
  return swap;
}

namespace {

// One ok record of a workload, from either data model.
struct SwapRow {
  std::uint32_t frame = 0;
  std::uint64_t variant = 0;
  std::optional<double> poll_start_us, poll_end_us, ts_start_us, ts_end_us;
};

// Timestamps where every row has them (so both sides use one clock), else the poll clock.
std::optional<VariantSwap> swap_of(const std::string& workload, std::vector<SwapRow> rows) {
  std::sort(rows.begin(), rows.end(),
            [](const SwapRow& x, const SwapRow& y) { return x.frame < y.frame; });
  const bool timestamps = !rows.empty() && std::all_of(rows.begin(), rows.end(), [](auto& r) {
    return r.ts_start_us && r.ts_end_us;
  });
  std::vector<SwapSample> samples;
  for (const SwapRow& r : rows) {
    const auto start = timestamps ? r.ts_start_us : r.poll_start_us;
    const auto end = timestamps ? r.ts_end_us : r.poll_end_us;
    if (start && end) samples.push_back({r.frame, r.variant, *end - *start});
  }
  return judge_swap(workload, timestamps ? Clock::ts : Clock::poll, samples);
}

}  // namespace

std::vector<VariantSwap> variant_swaps(const LoadedScenario& scenario) {
  std::vector<VariantSwap> out;
  for (const std::string& workload : scenario.workloads) {
    std::vector<SwapRow> rows;
    for (const RecordRow& r : scenario.records)
      if (r.workload == workload && r.status == RecordStatus::ok)
        rows.push_back(
            {r.frame, r.variant, r.poll_start_us, r.poll_end_us, r.ts_start_us, r.ts_end_us});
    if (auto swap = swap_of(workload, std::move(rows))) out.push_back(std::move(*swap));
  }
  return out;
}

std::vector<VariantSwap> variant_swaps(const Scenario& scenario, const ScenarioTimeline& timeline) {
  std::vector<VariantSwap> out;
  for (std::size_t w = 0; w < scenario.workloads.size(); ++w) {
    std::vector<SwapRow> rows;
    for (const WorkloadFrameRecord& r : timeline.records)
      if (r.workload == w && r.status == RecordStatus::ok)
        rows.push_back(
            {r.frame, r.variant, r.poll_start_us, r.poll_end_us, r.ts_start_us, r.ts_end_us});
    if (auto swap = swap_of(scenario.workloads[w].name, std::move(rows)))
      out.push_back(std::move(*swap));
  }
  return out;
}

std::string describe(const VariantSwap& s) {
  std::string interval =
      s.ratio_low ? fmt::format(" [{:.3f}, {:.3f}]", *s.ratio_low, *s.ratio_high) : std::string{};
  return fmt::format(
      "{} ({}): {:.1f} -> {:.1f} us, x{:.3f}{} after compile #{} ({} + {} frames): {}", s.workload,
      to_string(s.clock), s.before_median_us, s.after_median_us, s.ratio, interval, s.variant,
      s.before_frames, s.after_frames, to_string(s.call));
}

std::vector<StudyBenefit> study_benefits(const std::vector<const ScenarioOutcome*>& outcomes) {
  // condition -> workload -> the rounds' swaps, in first-seen order of conditions.
  std::vector<std::string> order;
  std::map<std::string, std::map<std::string, std::vector<VariantSwap>>> by_condition;
  for (const ScenarioOutcome* o : outcomes) {
    if (!o->timeline || !o->scenario.background || !o->scenario.background->bind_committed)
      continue;
    const std::string& condition = o->scenario.condition;
    if (!by_condition.count(condition)) order.push_back(condition);
    auto& workloads = by_condition[condition];
    for (VariantSwap& swap : variant_swaps(o->scenario, *o->timeline))
      workloads[swap.workload].push_back(std::move(swap));
  }
  std::vector<StudyBenefit> out;
  for (const std::string& condition : order) {
    for (const auto& [workload, swaps] : by_condition[condition]) {
      StudyBenefit b;
      b.condition = condition;
      b.workload = workload;
      b.clock = swaps.front().clock;
      b.rounds = swaps.size();
      if (swaps.size() == 1) {
        b.ratio = swaps.front().ratio;
        b.ratio_low = swaps.front().ratio_low;
        b.ratio_high = swaps.front().ratio_high;
        b.call = swaps.front().call;
        out.push_back(std::move(b));
        continue;
      }
      std::vector<double> logs;
      for (const VariantSwap& s : swaps) logs.push_back(std::log(s.ratio));
      const SampleSpread spread = sample_spread(logs);
      const double half = student_t_quantile_upper(0.025, static_cast<double>(spread.n - 1)) *
                          spread.standard_error;
      b.ratio = std::exp(spread.mean);
      b.ratio_low = std::exp(spread.mean - half);
      b.ratio_high = std::exp(spread.mean + half);
      b.call = call_of(*b.ratio_low, *b.ratio_high);
      out.push_back(std::move(b));
    }
  }
  return out;
}

std::string describe(const StudyBenefit& b) {
  const std::string interval =
      b.ratio_low ? fmt::format(" [{:.3f}, {:.3f}]", *b.ratio_low, *b.ratio_high) : std::string{};
  return fmt::format("{}: {} ({}) x{:.3f}{} over {} round{}: {}", b.condition, b.workload,
                     to_string(b.clock), b.ratio, interval, b.rounds, b.rounds == 1 ? "" : "s",
                     to_string(b.call));
}

std::string variant_swap_lines(const SuiteOutcome& outcome) {
  std::string out;
  for (const ScenarioOutcome& o : outcome.scenarios) {
    if (!o.timeline) continue;
    const std::vector<VariantSwap> swaps = variant_swaps(o.scenario, *o.timeline);
    if (swaps.empty()) continue;
    out += "\n" + o.scenario.name +
           ": GPU duration before and after the committed variant was bound (median, 95 % "
           "interval of the ratio)\n";
    for (const VariantSwap& s : swaps) out += "  " + describe(s) + "\n";
  }
  return out;
}

}  // namespace gpuoverlap
