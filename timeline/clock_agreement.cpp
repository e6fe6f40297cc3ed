#include "timeline/clock_agreement.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <optional>

#include "timeline/statistics.h"

namespace gpuoverlap {

namespace {

// A stamp may appear to precede its clock read by the calibration uncertainty plus this.
constexpr double kClockBeforeStampSlackUs = 2.0;
// The median detection delay above which the hypothesis is rejected: a stamp that takes a
// millisecond to reach the CPU is not a clock in the timestamp timebase.
constexpr double kMaxMedianDetectionUs = 1000.0;

struct Pair {
  const std::optional<double>* a;
  const std::optional<double>* b;
  std::uint32_t flag;
  bool gpu_vs_cpu;  // the pair crosses from a GPU clock to the CPU clock
};

std::optional<double> longest_duration(const WorkloadFrameRecord& r) {
  std::optional<double> longest;
  auto consider = [&](const std::optional<double>& s, const std::optional<double>& e) {
    if (s && e) longest = std::max(longest.value_or(0.0), *e - *s);
  };
  consider(r.poll_start_us, r.poll_end_us);
  consider(r.ts_start_us, r.ts_end_us);
  consider(r.clk_start_us, r.clk_end_us);
  return longest;
}

}  // namespace

std::string disagreement_names(std::uint32_t flags) {
  static constexpr std::pair<std::uint32_t, const char*> kNames[] = {
      {kStartPollTs, "start:poll-ts"},   {kEndPollTs, "end:poll-ts"},
      {kStartPollClk, "start:poll-clk"}, {kEndPollClk, "end:poll-clk"},
      {kStartTsClk, "start:ts-clk"},     {kEndTsClk, "end:ts-clk"}};
  std::string names;
  for (const auto& [bit, name] : kNames)
    if (flags & bit) {
      if (!names.empty()) names += ';';
      names += name;
    }
  return names;
}

double row_tolerance_us(const WorkloadFrameRecord& r, const AgreementTolerance& tolerance) {
  return std::max(tolerance.absolute_us, tolerance.relative * longest_duration(r).value_or(0.0));
}

std::size_t flag_disagreements(ScenarioTimeline& timeline, const AgreementTolerance& tolerance) {
  std::size_t flagged = 0;
  for (WorkloadFrameRecord& r : timeline.records) {
    r.disagreements = 0;
    if (r.status != RecordStatus::ok) continue;
    const double base = row_tolerance_us(r, tolerance);
    const Pair pairs[] = {{&r.poll_start_us, &r.ts_start_us, kStartPollTs, true},
                          {&r.poll_end_us, &r.ts_end_us, kEndPollTs, true},
                          {&r.poll_start_us, &r.clk_start_us, kStartPollClk, true},
                          {&r.poll_end_us, &r.clk_end_us, kEndPollClk, true},
                          {&r.ts_start_us, &r.clk_start_us, kStartTsClk, false},
                          {&r.ts_end_us, &r.clk_end_us, kEndTsClk, false}};
    for (const Pair& p : pairs) {
      if (!*p.a || !*p.b) continue;
      const double allowed = base + (p.gpu_vs_cpu ? r.calibration_deviation_us : 0.0);
      if (std::fabs(**p.a - **p.b) > allowed) r.disagreements |= p.flag;
    }
    if (r.disagreements) ++flagged;
  }
  return flagged;
}

nlohmann::json mark_poll_disturbance(ScenarioTimeline& timeline,
                                     std::optional<double> tolerance_us) {
  std::vector<double> windows;
  for (const WorkloadFrameRecord& r : timeline.records)
    for (const auto& w : {r.poll_start_window_us, r.poll_end_window_us})
      if (w) windows.push_back(*w);
  nlohmann::json out = {{"stamps", windows.size()}};
  if (windows.empty()) return out;
  const double p10 = *percentile(windows, 10);
  const double tolerance =
      tolerance_us.value_or(std::max(kDisturbanceWindowFactor * p10, kDisturbanceFloorUs));
  std::size_t disturbed = 0;
  for (WorkloadFrameRecord& r : timeline.records) {
    r.poll_disturbed = 0;
    if (r.poll_start_window_us && *r.poll_start_window_us > tolerance)
      r.poll_disturbed |= kPollStartDisturbed;
    if (r.poll_end_window_us && *r.poll_end_window_us > tolerance)
      r.poll_disturbed |= kPollEndDisturbed;
    disturbed += std::popcount(r.poll_disturbed);
  }
  out["tolerance_us"] = tolerance;
  out["tolerance_from"] = tolerance_us ? std::string("--poll-window-tolerance-us")
                                       : fmt::format("max({:g} x the p10 window, {:g} us)",
                                                     kDisturbanceWindowFactor, kDisturbanceFloorUs);
  out["window_p10_us"] = p10;
  out["window_p50_us"] = *percentile(windows, 50);
  out["window_p99_us"] = *percentile(windows, 99);
  out["window_max_us"] = *percentile(windows, 100);
  out["disturbed_stamps"] = disturbed;
  return out;
}

nlohmann::json verify_shader_clock_timebase(ScenarioTimeline& timeline) {
  nlohmann::json v = nlohmann::json::object();
  std::vector<double> delays_us, ticks, poll_ns;
  std::size_t converted = 0, early = 0, reversed = 0;
  double worst_early_us = 0;
  for (const WorkloadFrameRecord& r : timeline.records) {
    if (r.status != RecordStatus::ok) continue;
    auto add = [&](const std::optional<double>& poll, const std::optional<double>& clk,
                   const std::optional<std::uint64_t>& raw) {
      if (poll && raw) {
        ticks.push_back(static_cast<double>(*raw));
        poll_ns.push_back((r.frame_t0_us + *poll) * 1000.0);
      }
      if (!poll || !clk) return;
      ++converted;
      const double delay = *poll - *clk;
      delays_us.push_back(delay);
      if (delay < -(r.calibration_deviation_us + kClockBeforeStampSlackUs)) {
        ++early;
        worst_early_us = std::min(worst_early_us, delay);
      }
    };
    add(r.poll_start_us, r.clk_start_us, r.clk_start_ticks);
    add(r.poll_end_us, r.clk_end_us, r.clk_end_ticks);
    if (r.clk_start_ticks && r.clk_end_ticks && *r.clk_end_ticks < *r.clk_start_ticks) ++reversed;
  }
  if (auto fit = linear_fit(poll_ns, ticks))
    v["fit_against_poll"] = {{"ticks_per_ns", fit->slope},
                             {"r_squared", fit->r_squared},
                             {"points", fit->points},
                             {"note",
                              "least squares of raw ticks against poll time: the "
                              "clock's rate if it is steady"}};
  auto reject = [&](const std::string& reason) {
    v["verdict"] = "rejected";
    v["reason"] = reason;
    for (WorkloadFrameRecord& r : timeline.records) r.clk_start_us = r.clk_end_us = std::nullopt;
    return v;
  };
  if (ticks.empty() && converted == 0) {
    v["verdict"] = "unavailable";
    v["reason"] = "no shader clock values were recorded";
    return v;
  }
  if (converted == 0)
    return reject(
        "no calibration to the CPU clock (no calibrated timestamps): the ticks' unit and "
        "origin are unknown");
  if (reversed > 0)
    return reject(std::to_string(reversed) + " rows have an end clock before their start clock");
  const double median = *percentile(delays_us, 50);
  if (early > 0)
    return reject(std::to_string(early) + " of " + std::to_string(converted) +
                  " stamps were seen before the clock value written with them (worst " +
                  std::to_string(worst_early_us) +
                  " us): the ticks are not device timestamp ticks");
  if (median > kMaxMedianDetectionUs)
    return reject("the median delay from clock value to poll detection is " +
                  std::to_string(median) + " us (> 1000): not the device timestamp timebase");
  v["verdict"] = "accepted";
  v["method"] =
      "ticks converted as device timestamp ticks (timestampPeriod) with the frame's calibrated "
      "timestamps; verified: every stamp reached the CPU after the clock value written with it";
  v["detection_delay_us"] = {{"p50", median},
                             {"p99", *percentile(delays_us, 99)},
                             {"max", *std::max_element(delays_us.begin(), delays_us.end())},
                             {"samples", converted}};
  return v;
}

}  // namespace gpuoverlap
