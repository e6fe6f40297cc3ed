#include "analysis/verdict.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "analysis/student_t.h"
#include "analysis/study_files.h"
#include "analysis/variant_swap.h"
#include "core/atomic_file.h"
#include "timeline/export.h"
#include "timeline/statistics.h"

namespace gpuoverlap {

namespace {

// An alternating condition's two sides (BackgroundSpec::alternate_frames): frames of running
// blocks that its background work overlapped, against frames of held blocks that no compile
// overlapped. A compile still finishing from the block before would put the condition's own
// load into its baseline, and so hide intrusion.
bool running_side(const FrameRecord& f) { return !f.bg_held && background_overlapped(f); }
bool held_side(const FrameRecord& f) { return f.bg_held && !background_overlapped(f); }

std::uint32_t alternate_frames(const Scenario& s) {
  return s.background ? s.background->alternate_frames : 0;
}

std::string number(const std::optional<double>& v) {
  return v && std::isfinite(*v) ? fmt::format("{:.4f}", *v) : "";
}

}  // namespace

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

std::vector<Endpoint> verdict_endpoints(const Scenario& s, std::optional<double> tolerance_us) {
  std::vector<Endpoint> out;
  const bool game = s.cpu.has_value();
  const bool paced = game && s.cpu->frame_period_ms > 0;
  if (paced) {
    // What a player sees decides: the pace's median, late frames and stutters. Each of the
    // three is a test a player notices (a 15 % slower median moves every frame; two frames in
    // three past their pace is judder even when none is past 1.5 periods).
    const double period_us = s.cpu->frame_period_ms * 1000.0;
    out.push_back({"frame_interval_us", true, true, false, {}, ""});
    out.push_back({"late_frames", true, false, true,
                   period_us + tolerance_us.value_or(0.05 * period_us), "late"});
    out.push_back({"stutters", true, false, true, 1.5 * period_us, "past the stutter line"});
    // Where the time went: the CPU work, its chain, the workers' wake-up, the GPU's frame.
    out.push_back({"cpu_phase_us", false, true, true, {}, ""});
    if (s.cpu->critical_jobs > 0) out.push_back({"critical_path_us", false, false, true, {}, ""});
    out.push_back({"wake_max_us", false, false, true, {}, ""});
    out.push_back({"gpu_span_us", false, true, false, {}, ""});
  } else {
    // Unpaced, the frame's own ends decide.
    if (game) {
      out.push_back({"cpu_phase_us", true, true, true, {}, ""});
      if (s.cpu->critical_jobs > 0) out.push_back({"critical_path_us", true, false, true, {}, ""});
      out.push_back({"wake_max_us", true, false, true, {}, ""});
    } else {
      out.push_back({"cpu_frame_us", true, true, true, {}, ""});
    }
    out.push_back({"frame_interval_us", true, false, true, {}, ""});
    out.push_back({"gpu_span_us", true, true, false, {}, ""});
  }
  // Diagnostics: the frame's components.
  if (game) out.push_back({"cpu_frame_us", false, true, true, {}, ""});
  for (const char* m : {"cpu_submit_us", "submit_to_start_us", "poll_gap_max_us"})
    out.push_back({m, false, true, true, {}, ""});
  // 1 for a frame with a stamp whose detection window was past the tolerance, else 0: the tail
  // test at 0.5 compares the shares of such frames. Background work that takes the poller's
  // CPU shows here, where the poll-clock metrics above leave those frames out.
  out.push_back({"poll_disturbed", false, false, true, 0.5, "with a disturbed poll stamp"});
  for (const WorkloadSpec& w : s.workloads)
    out.push_back({"gpu_duration_us:" + w.name, false, true, true, {}, ""});
  return out;
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

std::vector<std::pair<std::string, std::vector<double>>> verdict_metrics(
    const Scenario& s, const ScenarioTimeline& timeline, const std::string& gpu_clock,
    const std::function<bool(const FrameRecord&)>& use_frame) {
  const std::vector<Endpoint> endpoints = verdict_endpoints(s);
  std::vector<std::pair<std::string, std::vector<double>>> out;
  for (const Endpoint& e : endpoints) out.emplace_back(e.metric, std::vector<double>{});
  auto add = [&](std::string_view metric, const std::optional<double>& value) {
    if (!value) return;
    for (auto& [name, values] : out)
      if (name == metric) values.push_back(*value);
  };
  const std::size_t frame_slots = timeline.frames.empty() ? 0 : timeline.frames.back().frame + 1;
  // Per frame, from its records: a disturbed start stamp, any disturbed stamp, and a workload
  // without both timestamps (the frame's gpu_span_us is then on the poll clock).
  std::vector<bool> start_disturbed(frame_slots, false), disturbed(frame_slots, false),
      span_on_poll(frame_slots, false);
  for (const WorkloadFrameRecord& r : timeline.records) {
    if (r.frame >= frame_slots) continue;
    start_disturbed[r.frame] = start_disturbed[r.frame] || (r.poll_disturbed & kPollStartDisturbed);
    disturbed[r.frame] = disturbed[r.frame] || r.poll_disturbed != 0;
    span_on_poll[r.frame] = span_on_poll[r.frame] || !r.ts_start_us || !r.ts_end_us;
  }
  std::vector<bool> use(frame_slots, false);
  for (const FrameRecord& f : timeline.frames) {
    if (f.status != RecordStatus::ok || !use_frame(f)) continue;
    use[f.frame] = true;
    add("cpu_phase_us", f.cpu_phase_us);
    add("critical_path_us", f.critical_path_us);
    add("wake_max_us", f.wake_max_us);
    add("frame_interval_us", f.frame_interval_us);
    add("late_frames", f.frame_interval_us);
    add("stutters", f.frame_interval_us);
    // The poll clock's figures of a frame with a disturbed stamp say when the poller looked,
    // not when the GPU wrote: left out, and counted by poll_disturbed.
    if (!(span_on_poll[f.frame] && disturbed[f.frame])) add("gpu_span_us", f.gpu_span_us);
    add("cpu_frame_us", f.cpu_frame_us);
    add("cpu_submit_us", f.cpu_submit_us);
    if (!start_disturbed[f.frame]) add("submit_to_start_us", f.submit_to_start_us);
    add("poll_gap_max_us", f.poll_gap_max_us);
    add("poll_disturbed", disturbed[f.frame] ? 1.0 : 0.0);
  }
  std::vector<std::vector<double>> durations(s.workloads.size());
  for (const WorkloadFrameRecord& r : timeline.records) {
    if (r.status != RecordStatus::ok || r.frame >= use.size() || !use[r.frame]) continue;
    // A bound variant (bind_committed) is different GPU work: the cost is judged on the frames
    // that ran the build-time pipeline, the variant's change is the benefit (variant_swap.h).
    if (r.variant != 0) continue;
    const auto start = start_on(r, gpu_clock), end = end_on(r, gpu_clock);
    if (start && end) durations[r.workload].push_back(*end - *start);
  }
  for (std::size_t w = 0; w < s.workloads.size(); ++w)
    for (auto& [name, values] : out)
      if (name == "gpu_duration_us:" + s.workloads[w].name) values = std::move(durations[w]);
  return out;
}

namespace {

using Samples = std::vector<std::pair<std::string, std::vector<double>>>;

// One unit of evidence: a round of the baseline and the same round of a condition (or a block
// of each, for a study of one round), metric by metric.
struct Unit {
  Samples baseline, condition;
};

double share_beyond(const std::vector<double>& values, double threshold) {
  if (values.empty()) return 0;
  return static_cast<double>(
             std::count_if(values.begin(), values.end(), [&](double v) { return v > threshold; })) /
         static_cast<double>(values.size());
}

// Judges one metric of one condition. `baseline` and `sample` are all usable frames (for the
// descriptive columns and the tail's threshold); `units` the same metric per unit. `tests` is
// K, the condition's intrusion tests.
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

std::uint32_t frame_count(const ScenarioOutcome& o) {
  return o.timeline->frames.empty() ? 0 : o.timeline->frames.back().frame + 1;
}

// A frame filter: `side`, and the frame number in [first, end).
std::function<bool(const FrameRecord&)> in_range(bool (*side)(const FrameRecord&),
                                                 std::uint32_t first, std::uint32_t end) {
  return [=](const FrameRecord& f) { return f.frame >= first && f.frame < end && side(f); };
}

bool any_frame(const FrameRecord&) { return true; }

// The units of one condition: its rounds paired with the baseline's by round number, or, for a
// study of one round, `blocks` blocks of consecutive frames of each. An alternating condition
// (alternate_frames > 0) is its own baseline: each pair of adjacent blocks of each of its runs.
// `block`: the condition's alternate_frames (0: none). `condition_side`: the condition's frames
// that are evidence (those its background work overlapped; every frame in a study of
// neighbours).
std::vector<Unit> units_of(const std::vector<const ScenarioOutcome*>& baseline_rounds,
                           const std::vector<const ScenarioOutcome*>& rounds,
                           const std::string& gpu_clock, const VerdictSettings& settings,
                           std::uint32_t block, bool (*condition_side)(const FrameRecord&)) {
  std::vector<Unit> units;
  if (block > 0) {
    for (const ScenarioOutcome* c : rounds) {
      const std::uint32_t frames = frame_count(*c);
      for (std::uint32_t first = 0; first < frames; first += 2 * block)
        units.push_back({verdict_metrics(c->scenario, *c->timeline, gpu_clock,
                                         in_range(held_side, first, first + 2 * block)),
                         verdict_metrics(c->scenario, *c->timeline, gpu_clock,
                                         in_range(running_side, first, first + 2 * block))});
    }
    return units;
  }
  if (baseline_rounds.size() == 1 && rounds.size() == 1) {
    const ScenarioOutcome& b = *baseline_rounds.front();
    const ScenarioOutcome& c = *rounds.front();
    const std::uint32_t b_frames = frame_count(b), c_frames = frame_count(c);
    const auto blocks = static_cast<std::uint32_t>(std::max<std::size_t>(1, settings.blocks));
    for (std::uint32_t k = 0; k < blocks; ++k)
      units.push_back(
          {verdict_metrics(b.scenario, *b.timeline, gpu_clock,
                           in_range(any_frame, k * b_frames / blocks, (k + 1) * b_frames / blocks)),
           verdict_metrics(
               c.scenario, *c.timeline, gpu_clock,
               in_range(condition_side, k * c_frames / blocks, (k + 1) * c_frames / blocks))});
    return units;
  }
  for (const ScenarioOutcome* c : rounds) {
    const auto b = std::find_if(
        baseline_rounds.begin(), baseline_rounds.end(),
        [&](const ScenarioOutcome* o) { return o->scenario.round == c->scenario.round; });
    if (b == baseline_rounds.end()) continue;
    units.push_back({verdict_metrics((*b)->scenario, *(*b)->timeline, gpu_clock, any_frame),
                     verdict_metrics(c->scenario, *c->timeline, gpu_clock, condition_side)});
  }
  return units;
}

// The rounds of one condition, their samples concatenated metric by metric.
Samples pooled_metrics(const std::vector<const ScenarioOutcome*>& rounds,
                       const std::string& gpu_clock, bool (*use_frame)(const FrameRecord&)) {
  Samples pooled;
  for (const ScenarioOutcome* r : rounds) {
    Samples one = verdict_metrics(r->scenario, *r->timeline, gpu_clock, use_frame);
    if (pooled.empty()) {
      pooled = std::move(one);
      continue;
    }
    for (std::size_t m = 0; m < pooled.size() && m < one.size(); ++m)
      pooled[m].second.insert(pooled[m].second.end(), one[m].second.begin(), one[m].second.end());
  }
  return pooled;
}

const std::vector<double>& samples_of(const Samples& samples, std::string_view metric) {
  static const std::vector<double> none;
  for (const auto& [name, values] : samples)
    if (name == metric) return values;
  return none;
}

// The period a frame's effects are shares of: the pace, or unpaced the baseline's median frame
// interval.
std::optional<double> frame_period_us(const Scenario& s, const Samples& baseline) {
  if (s.cpu && s.cpu->frame_period_ms > 0) return s.cpu->frame_period_ms * 1000.0;
  for (const auto& [name, values] : baseline)
    if (name == "frame_interval_us" && !values.empty()) return percentile(values, 50);
  return std::nullopt;
}

// "327 of 523 frames late (beyond 8.40 ms; baseline 4 of 600), 36 stutters (2), frame
// interval p50 9,428 µs (8,001), 1 % low 88 fps (121)".
std::string describe_pacing(const PacingSummary& p, const PacingSummary& baseline,
                            double late_line_us) {
  return fmt::format(
      "{} of {} frames late (beyond {:.2f} ms; baseline {} of {}), {} stutter{} ({}), frame "
      "interval p50 {:.0f} µs ({:.0f}), 1 % low {:.0f} fps ({:.0f})",
      p.late, p.frames, late_line_us / 1000.0, baseline.late, baseline.frames, p.stutters,
      p.stutters == 1 ? "" : "s", baseline.stutters, p.interval_p50_us, baseline.interval_p50_us,
      p.one_percent_low_fps, baseline.one_percent_low_fps);
}

BackgroundProgress background_progress(const std::string& condition, std::uint32_t threads,
                                       const std::vector<const ScenarioOutcome*>& rounds) {
  BackgroundProgress p;
  p.condition = condition;
  p.control_threads = threads;
  std::vector<double> latency_ms;
  // Sums over the completed compiles that have each figure, and how many had it.
  double on_cpu_ms = 0, system_ms = 0, run_delay_ms = 0, minor_faults = 0;
  std::size_t with_cpu = 0, with_system = 0, with_run_delay = 0, with_faults = 0;
  for (const ScenarioOutcome* r : rounds) {
    const ScenarioTimeline& t = *r->timeline;
    if (t.commit_wait) {
      if (!t.commit_wait->requested_before_frame) ++p.commits_asked_at_end;
      if (const auto ms = t.commit_wait->to_event_ms())
        p.commit_to_event_ms.push_back(*ms);
      else
        ++p.commits_not_signalled;
    }
    if (t.frames.empty()) continue;
    const std::int64_t first_ns =
        t.time_origin_ns + static_cast<std::int64_t>(t.frames.front().cpu_start_us * 1e3);
    const std::int64_t last_ns =
        t.time_origin_ns + static_cast<std::int64_t>(
                               (t.frames.back().cpu_start_us + t.frames.back().cpu_frame_us) * 1e3);
    p.seconds += static_cast<double>(last_ns - first_ns) / 1e9;
    for (const background::BackgroundTaskRecord& task : t.background_tasks) {
      // Completed: it compiled, whether its result was kept or its pipeline was gone.
      const bool completed = task.outcome == "delivered" || task.outcome.starts_with("compiled") ||
                             task.outcome.starts_with("dropped");
      if (!completed || task.finish_ns < first_ns || task.finish_ns > last_ns) continue;
      ++p.compiles;
      latency_ms.push_back(static_cast<double>(task.finish_ns - task.queued_ns) / 1e6);
      const ThreadAccounting& used = task.thread.used;
      auto add = [](const auto& figure, double scale, double& sum, std::size_t& count) {
        if (!figure) return;
        sum += static_cast<double>(*figure) * scale;
        ++count;
      };
      add(used.on_cpu_ns, 1e-6, on_cpu_ms, with_cpu);
      if (used.on_cpu_ns) add(used.system_ns, 1e-6, system_ms, with_system);
      add(used.run_delay_ns, 1e-6, run_delay_ms, with_run_delay);
      add(used.minor_faults, 1.0, minor_faults, with_faults);
    }
  }
  if (with_cpu > 0) p.on_cpu_ms_per_compile = on_cpu_ms / static_cast<double>(with_cpu);
  if (with_system > 0 && with_system == with_cpu && on_cpu_ms > 0)
    p.kernel_share = system_ms / on_cpu_ms;
  if (with_faults > 0) p.minor_faults_per_compile = minor_faults / static_cast<double>(with_faults);
  if (with_run_delay > 0)
    p.run_delay_ms_per_compile = run_delay_ms / static_cast<double>(with_run_delay);
  if (p.seconds > 0) p.compiles_per_s = static_cast<double>(p.compiles) / p.seconds;
  p.queue_to_done_p50_ms = percentile(latency_ms, 50);
  p.queue_to_done_p99_ms = percentile(latency_ms, 99);
  return p;
}

}  // namespace

std::string describe_compile_cost(const BackgroundProgress& progress) {
  if (!progress.on_cpu_ms_per_compile) return {};
  std::string out =
      fmt::format("compile threads: {:.1f} ms CPU per compile", *progress.on_cpu_ms_per_compile);
  if (progress.kernel_share)
    out += fmt::format(", {:.0f} % of it in the kernel", *progress.kernel_share * 100);
  if (progress.minor_faults_per_compile)
    out += fmt::format(", {:.0f} page faults per compile", *progress.minor_faults_per_compile);
  return out;
}

std::string describe_commit_waits(const BackgroundProgress& progress) {
  const std::size_t rounds = progress.commit_to_event_ms.size() + progress.commits_not_signalled;
  if (rounds == 0) return {};
  std::string out = "a commit waited for: ";
  if (!progress.commit_to_event_ms.empty()) {
    out += fmt::format(
        "{:.0f} ms median over {} round{}", *percentile(progress.commit_to_event_ms, 50),
        progress.commit_to_event_ms.size(), progress.commit_to_event_ms.size() == 1 ? "" : "s");
    if (progress.commit_to_event_ms.size() > 1)
      out += fmt::format(" (max {:.0f})", *std::max_element(progress.commit_to_event_ms.begin(),
                                                            progress.commit_to_event_ms.end()));
  }
  if (progress.commits_not_signalled > 0)
    out += fmt::format("{}{} of {} rounds never signalled within commit_timeout_ms",
                       progress.commit_to_event_ms.empty() ? "" : ", ",
                       progress.commits_not_signalled, rounds);
  if (progress.commits_asked_at_end > 0)
    out += fmt::format(", {} of {} asked after the frames (every CPU free)",
                       progress.commits_asked_at_end, rounds);
  return out;
}

Result<StudyVerdict> judge_study(const std::vector<const ScenarioOutcome*>& outcomes,
                                 const VerdictSettings& settings) {
  StudyVerdict out;
  // Conditions in first-seen order, each with its rounds.
  std::vector<std::pair<std::string, std::vector<const ScenarioOutcome*>>> conditions;
  std::string baseline_name;
  // A study of neighbours (engine/concurrent_suite.h): the device alone is the baseline, and
  // every frame of a condition is evidence, as no background work marks the frames it touched.
  const bool neighbours = !outcomes.empty() && outcomes.front()->scenario.neighbours_study;
  bool (*const evidence)(const FrameRecord&) = neighbours ? any_frame : background_overlapped;
  for (const ScenarioOutcome* o : outcomes) {
    if (!o->timeline) return make_error("condition '" + o->scenario.condition + "' has no results");
    if (o->scenario.neighbours_study != neighbours)
      return make_error("a study of neighbours mixed with one of background work");
    if (neighbours ? o->scenario.condition == "alone"
                   : !o->scenario.background && !o->scenario.null_control) {
      if (!baseline_name.empty() && baseline_name != o->scenario.condition)
        return make_error("two baseline conditions ('" + baseline_name + "' and '" +
                          o->scenario.condition + "')");
      baseline_name = o->scenario.condition;
    }
    auto it = std::find_if(conditions.begin(), conditions.end(),
                           [&](const auto& c) { return c.first == o->scenario.condition; });
    if (it == conditions.end()) {
      conditions.push_back({o->scenario.condition, {}});
      it = conditions.end() - 1;
    }
    if (std::find(it->second.begin(), it->second.end(), o) != it->second.end())
      return make_error("condition '" + o->scenario.condition + "' given twice");
    it->second.push_back(o);
  }
  if (baseline_name.empty())
    return make_error(neighbours ? "no baseline condition (the device alone)"
                                 : "no baseline condition (one without [background])");
  const auto& baseline = *std::find_if(conditions.begin(), conditions.end(),
                                       [&](const auto& c) { return c.first == baseline_name; });
  out.study = outcomes.front()->scenario.study;
  out.rounds = 1;
  for (const ScenarioOutcome* o : outcomes) out.rounds = std::max(out.rounds, o->scenario.round);
  out.baseline = baseline_name;
  // Timestamps when the baseline has them for every workload, else the poll clock.
  out.gpu_clock = "ts";
  for (const ScenarioOutcome* r : baseline.second)
    for (const WorkloadFrameRecord& rec : r->timeline->records)
      if (rec.status == RecordStatus::ok && !(rec.ts_start_us && rec.ts_end_us))
        out.gpu_clock = "poll";
  const Samples baseline_metrics = pooled_metrics(baseline.second, out.gpu_clock, any_frame);
  out.unit = baseline.second.size() == 1 ? "block" : "round";
  const Scenario& foreground = baseline.second.front()->scenario;
  out.not_run = foreground.study_not_run;
  out.period_us = frame_period_us(foreground, baseline_metrics);
  const bool paced = foreground.cpu && foreground.cpu->frame_period_ms > 0;
  std::optional<double> tolerance_us;
  if (paced) {
    std::vector<std::vector<double>> rounds_interval_us;
    for (const ScenarioOutcome* r : baseline.second)
      rounds_interval_us.push_back(
          samples_of(verdict_metrics(r->scenario, *r->timeline, out.gpu_clock, any_frame),
                     "frame_interval_us"));
    tolerance_us =
        late_tolerance_us(*out.period_us, rounds_interval_us, settings.late_tolerance_us);
    out.late_line_us = *out.period_us + *tolerance_us;
    out.stutter_line_us = 1.5 * *out.period_us;
    out.baseline_pacing = pacing_summary(samples_of(baseline_metrics, "frame_interval_us"),
                                         *out.late_line_us, *out.stutter_line_us);
  }
  // Endpoints the baseline has no sample of (no stamps, no chain) are not judged at all.
  const std::vector<Endpoint> endpoints = verdict_endpoints(foreground, tolerance_us);
  std::vector<bool> measurable(endpoints.size(), false);
  out.tests = 0;
  for (std::size_t m = 0; m < endpoints.size() && m < baseline_metrics.size(); ++m) {
    measurable[m] = !baseline_metrics[m].second.empty();
    if (measurable[m] && endpoints[m].primary)
      out.tests += (endpoints[m].median ? 1 : 0) + (endpoints[m].tail ? 1 : 0);
  }
  out.tests = std::max<std::size_t>(out.tests, 1);
  out.burst_reference = burst_reference(baseline.second);
  if (out.burst_reference)
    out.baseline_bursts = find_host_bursts(baseline.second, *out.burst_reference);

  for (const auto& [name, rounds] : conditions) {
    if (name == baseline_name) continue;
    ConditionVerdict cv;
    cv.condition = name;
    const auto& background = rounds.front()->scenario.background;
    cv.control_threads = background && !neighbours ? background->unmanaged_threads : 0;
    cv.control = cv.control_threads > 0;
    if (background && !cv.control && !neighbours) {
      using namespace background;
      cv.spec_scheduling = background->policy == ThreadPolicy::idle &&
                           background->cpus.kind == CpuPlacementKind::any &&
                           background->allocator == Allocator::system && !background->cgroup_idle &&
                           background->dispatch == Dispatch::any;
      cv.scheduling = std::string(to_string(background->policy));
      if (background->cpus.kind != CpuPlacementKind::any)
        cv.scheduling += ", cpus " + describe(background->cpus);
      if (background->allocator == Allocator::keep) cv.scheduling += ", memory kept";
      if (background->cgroup_idle) cv.scheduling += ", idle cgroup";
      if (background->dispatch == Dispatch::gaps) cv.scheduling += ", in the frame's gaps";
    }
    // The null control has no background work to mark frames: every frame is evidence.
    cv.null_control = !neighbours && rounds.front()->scenario.null_control;
    bool (*const use)(const FrameRecord&) = cv.null_control ? any_frame : evidence;
    for (const ScenarioOutcome* r : rounds) {
      cv.frames += r->timeline->frames.size();
      for (const FrameRecord& f : r->timeline->frames)
        if (use(f)) ++cv.active_frames;
    }
    out.has_control = out.has_control || cv.control;
    out.has_null = out.has_null || cv.null_control;
    const std::uint32_t block = neighbours ? 0 : alternate_frames(rounds.front()->scenario);
    const Samples metrics = pooled_metrics(rounds, out.gpu_clock, block ? running_side : use);
    if (out.late_line_us)
      cv.pacing = pacing_summary(samples_of(metrics, "frame_interval_us"), *out.late_line_us,
                                 *out.stutter_line_us);
    if (!block) cv.time_account = account_time(baseline.second, rounds, use, out.late_line_us);
    // An alternating condition's baseline is its own held blocks.
    const Samples own_baseline =
        block ? pooled_metrics(rounds, out.gpu_clock, held_side) : Samples{};
    const Samples& reference = block ? own_baseline : baseline_metrics;
    const std::vector<Unit> units =
        units_of(baseline.second, rounds, out.gpu_clock, settings, block, use);
    const std::size_t count = std::min({metrics.size(), reference.size(), endpoints.size()});
    std::vector<VerdictRow> judged;
    for (std::size_t m = 0; m < count; ++m) {
      if (!measurable[m]) continue;
      judged.push_back(judge_metric(cv.condition, endpoints[m], m, reference[m].second,
                                    metrics[m].second, units, out.tests, settings));
      if (judged.back().effect_us && out.period_us && *out.period_us > 0)
        judged.back().effect_share = *judged.back().effect_us / *out.period_us;
    }
    cv.pairing = block ? fmt::format("alternating:{}", block) : out.unit;
    bool any_intrusive = false, all_fine = true;
    for (VerdictRow& row : judged) {
      row.control = cv.control;
      row.null_control = cv.null_control;
      row.pairing = cv.pairing;
      const bool primary = row.role == EndpointRole::primary;
      if (primary && cv.active_frames < settings.min_frames &&
          row.decision != Decision::intrusive) {
        row.decision = Decision::inconclusive;
        row.note = fmt::format("background work overlapped only {} of {} frames", cv.active_frames,
                               cv.frames);
      }
      if (primary) {
        any_intrusive = any_intrusive || row.decision == Decision::intrusive;
        all_fine = all_fine && row.decision == Decision::non_intrusive;
      }
      out.rows.push_back(std::move(row));
    }
    cv.progress = background_progress(cv.condition, cv.control_threads, rounds);
    if (out.burst_reference) cv.bursts = find_host_bursts(rounds, *out.burst_reference);
    cv.decision = any_intrusive ? Decision::intrusive
                  : all_fine    ? Decision::non_intrusive
                                : Decision::inconclusive;
    if (cv.control && any_intrusive) out.control_detected = true;
    if (cv.null_control && any_intrusive) out.null_false_alarm = true;
    if (cv.control) {
      ControlDose dose{cv.condition, cv.control_threads, cv.decision, "", {}, {}};
      // The strongest effect: the intrusive row that clears its margin by the most, in units of
      // the margin (a median ratio and a tail share are not otherwise comparable).
      double best = 0;
      for (auto row = out.rows.end() - static_cast<std::ptrdiff_t>(judged.size());
           row != out.rows.end(); ++row) {
        if (row->decision != Decision::intrusive) continue;
        const double median_clear =
            row->ci_low ? std::log(*row->ci_low) / std::log1p(settings.p50_margin) : 0;
        const double tail_clear = row->tail_ci_low && settings.tail_margin > 0
                                      ? *row->tail_ci_low / settings.tail_margin
                                      : 0;
        if (std::max(median_clear, tail_clear) > best) {
          best = std::max(median_clear, tail_clear);
          dose.metric = row->metric;
          dose.ratio_p50 = row->ratio_p50;
          dose.tail_excess = row->tail_excess;
        }
      }
      out.doses.push_back(std::move(dose));
    }
    out.conditions.push_back(cv);
  }
  std::stable_sort(
      out.doses.begin(), out.doses.end(),
      [](const ControlDose& a, const ControlDose& b) { return a.threads < b.threads; });
  for (const ControlDose& d : out.doses)
    if (d.decision == Decision::intrusive) {
      out.detected_from_threads = d.threads;
      break;
    }
  // A round in which the host burst with nothing else running (the baseline's or the null
  // control's bursts) may not decide a condition alone: judged again without such rounds, a
  // decision that changes is withdrawn. Only where enough rounds remain to judge at all.
  if (settings.guard_host_bursts && !neighbours) {
    std::vector<std::uint32_t> burst_rounds = out.baseline_bursts.rounds;
    for (const ConditionVerdict& cv : out.conditions)
      if (cv.null_control)
        burst_rounds.insert(burst_rounds.end(), cv.bursts.rounds.begin(), cv.bursts.rounds.end());
    std::sort(burst_rounds.begin(), burst_rounds.end());
    burst_rounds.erase(std::unique(burst_rounds.begin(), burst_rounds.end()), burst_rounds.end());
    const auto in_burst_round = [&](const ScenarioOutcome* o) {
      return std::binary_search(burst_rounds.begin(), burst_rounds.end(), o->scenario.round);
    };
    std::vector<const ScenarioOutcome*> calm;
    for (const ScenarioOutcome* o : outcomes)
      if (!in_burst_round(o)) calm.push_back(o);
    if (!burst_rounds.empty() && out.rounds >= burst_rounds.size() + settings.min_units) {
      VerdictSettings without = settings;
      without.guard_host_bursts = false;
      if (const auto calm_verdict = judge_study(calm, without); calm_verdict.ok()) {
        for (ConditionVerdict& cv : out.conditions) {
          if (cv.control || cv.null_control) continue;
          if (cv.decision != Decision::intrusive && cv.decision != Decision::non_intrusive)
            continue;
          const auto again =
              std::find_if(calm_verdict->conditions.begin(), calm_verdict->conditions.end(),
                           [&](const ConditionVerdict& c) { return c.condition == cv.condition; });
          // Without the control detected there, the calm rounds lose power, which contradicts
          // no decision: only a decision of their own does.
          if (again == calm_verdict->conditions.end() || again->decision == cv.decision ||
              again->decision == Decision::no_power)
            continue;
          cv.burst_note = fmt::format(
              "{} only with round{} {}, where the host burst with nothing else running; without "
              "{}: {}",
              to_string(cv.decision), burst_rounds.size() == 1 ? "" : "s",
              fmt::join(burst_rounds, ", "), burst_rounds.size() == 1 ? "it" : "them",
              to_string(again->decision));
          cv.decision = Decision::inconclusive;
          for (VerdictRow& row : out.rows)
            if (row.condition == cv.condition && row.role == EndpointRole::primary &&
                (row.decision == Decision::intrusive || row.decision == Decision::non_intrusive)) {
              row.note += std::string(row.note.empty() ? "" : "; ") + "withdrawn: " + cv.burst_note;
              row.decision = Decision::inconclusive;
            }
        }
      }
    }
  }
  // No power: the positive control was not told apart from the baseline, so a condition that
  // looks non-intrusive may only show that this setup cannot see intrusion.
  // The null control keeps its own call: it checks the error control, not the power.
  if (out.has_control && !out.control_detected) {
    for (VerdictRow& row : out.rows)
      if (!row.control && !row.null_control && row.role == EndpointRole::primary)
        row.decision = Decision::no_power;
    for (ConditionVerdict& cv : out.conditions)
      if (!cv.control && !cv.null_control) cv.decision = Decision::no_power;
  }
  // Progress beside the cost: the control's smallest dose is the rate of unmanaged compiles;
  // a non-intrusive condition that got under 5 % of it done is starved.
  const BackgroundProgress* control_rate = nullptr;
  for (const ConditionVerdict& cv : out.conditions)
    if (cv.control && (!control_rate || cv.control_threads < control_rate->control_threads))
      control_rate = &cv.progress;
  for (ConditionVerdict& cv : out.conditions) {
    if (neighbours || cv.control || cv.null_control || cv.decision != Decision::non_intrusive)
      continue;
    cv.starved = cv.progress.compiles == 0 ||
                 (control_rate && cv.progress.compiles_per_s < 0.05 * control_rate->compiles_per_s);
  }
  if (neighbours) {
    std::size_t baseline_frames = 0;
    for (const ScenarioOutcome* r : baseline.second) baseline_frames += r->timeline->frames.size();
    for (const ConditionVerdict& cv : out.conditions)
      out.summary += fmt::format(
          "{}: {} ({} frames with the other devices running it, against {} alone)\n", cv.condition,
          cv.decision == Decision::intrusive       ? "disturbed by the other devices"
          : cv.decision == Decision::non_intrusive ? "not disturbed by the other devices"
                                                   : to_string(cv.decision),
          cv.frames, baseline_frames);
    out.summary +=
        "a study of neighbours has no positive control: \"not disturbed\" holds within the "
        "margins, for effects at least verdict.csv's detectable_ratio\n";
    return out;
  }
  for (const ConditionVerdict& cv : out.conditions) {
    std::string rate = fmt::format("{:.1f} compiles/s", cv.progress.compiles_per_s);
    if (!cv.control && control_rate)
      rate +=
          fmt::format(" (unmanaged, {} thread{}: {:.1f})", control_rate->control_threads,
                      control_rate->control_threads == 1 ? "" : "s", control_rate->compiles_per_s);
    if (const std::string cost = describe_compile_cost(cv.progress); !cost.empty())
      rate += "; " + cost;
    if (const std::string waits = describe_commit_waits(cv.progress); !waits.empty())
      rate += "; " + waits;
    std::string pacing;
    if (cv.pacing && out.baseline_pacing)
      pacing = "; " + describe_pacing(*cv.pacing, *out.baseline_pacing, *out.late_line_us);
    if (cv.time_account) pacing += "; " + cv.time_account->line;
    if (out.burst_reference)
      if (const std::string bursts = describe_host_bursts(cv.bursts, *out.burst_reference);
          !bursts.empty())
        pacing += "; " + bursts;
    if (!cv.burst_note.empty()) pacing += "; withdrawn: " + cv.burst_note;
    if (cv.null_control) {
      out.summary +=
          fmt::format("{} (null control, the baseline's settings again): {} ({} frames{})\n",
                      cv.condition, to_string(cv.decision), cv.frames, pacing);
      continue;
    }
    out.summary += fmt::format(
        "{}{}: {}, {} ({} of {} frames overlapped background work{}){}\n", cv.condition,
        cv.control ? " (positive control)" : "",
        cv.starved ? std::string_view("non-intrusive but starved") : to_string(cv.decision), rate,
        cv.active_frames, cv.frames,
        cv.pairing.starts_with("alternating:")
            ? "; against its own held blocks of " +
                  cv.pairing.substr(std::string_view("alternating:").size()) + " frames"
            : "",
        pacing);
  }
  for (const auto& [condition, why] : out.not_run)
    out.summary += fmt::format("{}: not run on this host: {}\n", condition, why);
  if (out.burst_reference) {
    const std::string bursts = describe_host_bursts(out.baseline_bursts, *out.burst_reference);
    out.summary += fmt::format("baseline: {}\n", bursts.empty() ? "no host bursts" : bursts);
    const double asked_ms = foreground.cpu ? foreground.cpu->cpu_ms_per_worker_share() : 0.0;
    if (asked_ms > 0) {
      out.cpu_phase_of_asked = out.burst_reference->cpu_phase_p50_us / 1000.0 / asked_ms;
      if (*out.cpu_phase_of_asked < kLessWorkThanAsked)
        out.summary += fmt::format(
            "the game frame did less work than asked: the baseline's CPU phase p50 {:.2f} ms "
            "against {:.2f} ms of busy work per worker; the busy-work calibration "
            "(meta.json cpu.busy_work_calibration) ran slower than the frames, so this study "
            "measured a lighter game than its file says\n",
            out.burst_reference->cpu_phase_p50_us / 1000.0, asked_ms);
    }
  }
  if (out.has_null)
    out.summary += out.null_false_alarm
                       ? "null control called intrusive: its rounds differed from the baseline's "
                         "by more than the error control allows on this host, so an intrusive "
                         "call here may be false\n"
                       : "null control not called intrusive: the error control held\n";
  if (!out.has_control)
    out.summary += "no positive control in this study: a non-intrusive verdict is unchecked\n";
  else
    out.summary += out.control_detected
                       ? "positive control detected: the study can see intrusion\n"
                       : "positive control NOT detected: inconclusive (no power)\n";
  if (out.doses.size() > 1 || (out.doses.size() == 1 && out.detected_from_threads)) {
    out.summary += "control dose-response:";
    for (const ControlDose& d : out.doses) {
      out.summary += fmt::format(" {} thread{}: {}", d.threads, d.threads == 1 ? "" : "s",
                                 to_string(d.decision));
      if (!d.metric.empty())
        out.summary += fmt::format(" ({} x{:.3f}, tail {:+.1f} points)", d.metric,
                                   d.ratio_p50.value_or(0), 100.0 * d.tail_excess.value_or(0));
      out.summary += &d == &out.doses.back() ? "\n" : ";";
    }
    if (out.detected_from_threads)
      out.summary += fmt::format(
          "the smallest dose detected is {} normal-priority compile thread{}: intrusion weaker "
          "than that dose's may go unseen\n",
          *out.detected_from_threads, *out.detected_from_threads == 1 ? "" : "s");
  }
  return out;
}

namespace {

// A row that more rounds could still decide; the control's rows do not hold a study back.
// Nor do the null control's: they check the error control, and the study need not wait on them.
bool undecided(const VerdictRow& r) {
  return !r.control && !r.null_control && r.role == EndpointRole::primary &&
         is_inconclusive(r.decision);
}

// The lines under a study's verdict: its rounds and why they stopped, and, when undecided,
// what the rounds could have seen.
std::string progress_lines(const StudyVerdict& verdict, const StudyProgress& progress,
                           std::uint32_t planned) {
  std::string out = fmt::format("rounds: {} ({} planned); {}\n", progress.rounds, planned,
                                progress.stop.empty() ? "the run ended" : progress.stop);
  // Only rows of conditions still undecided: an inconclusive row of a condition intrusive on
  // another endpoint is decided, and what it could have seen says nothing about the study.
  auto condition_undecided = [&](const std::string& condition) {
    return std::any_of(verdict.conditions.begin(), verdict.conditions.end(),
                       [&](const ConditionVerdict& c) {
                         return c.condition == condition && is_inconclusive(c.decision);
                       });
  };
  double ratio = 0, tail = 0;
  for (const VerdictRow& r : verdict.rows)
    if (undecided(r) && r.detectable_ratio && condition_undecided(r.condition))
      ratio = std::max(ratio, *r.detectable_ratio), tail = std::max(tail, *r.detectable_tail);
  if (ratio > 0)
    out += fmt::format(
        "undecided rows could have seen (half the time) a median ratio of {:.3f} or a tail of "
        "{:+.1f} points, at worst\n",
        ratio, 100.0 * tail);
  return out;
}

}  // namespace

StudyProgress study_progress(const std::vector<const ScenarioOutcome*>& outcomes,
                             const StudyVerdict& verdict) {
  StudyProgress p;
  p.rounds = verdict.rounds;
  // The next round repeats the baseline and the conditions not yet decided (next_study_rounds):
  // their last round is what another round would cost.
  auto continues = [&](const std::string& condition) {
    if (condition == verdict.baseline) return true;
    const auto cv =
        std::find_if(verdict.conditions.begin(), verdict.conditions.end(),
                     [&](const ConditionVerdict& c) { return c.condition == condition; });
    return cv == verdict.conditions.end() || is_inconclusive(cv->decision);
  };
  for (const ScenarioOutcome* o : outcomes) {
    p.seconds += o->seconds;
    if (o->scenario.round == p.rounds && continues(o->scenario.condition))
      p.last_round_seconds += o->seconds;
  }
  // A condition intrusive on one primary endpoint is decided, whatever its other rows say:
  // only the rows of conditions still undecided hold the study back.
  for (const VerdictRow& r : verdict.rows) {
    const auto cv =
        std::find_if(verdict.conditions.begin(), verdict.conditions.end(),
                     [&](const ConditionVerdict& c) { return c.condition == r.condition; });
    const bool condition_decided = cv != verdict.conditions.end() && !is_inconclusive(cv->decision);
    p.undecided += undecided(r) && !condition_decided ? 1 : 0;
  }
  p.decided = p.undecided == 0;
  const std::uint32_t smallest_detected =
      verdict.detected_from_threads.value_or(std::numeric_limits<std::uint32_t>::max());
  for (const ConditionVerdict& c : verdict.conditions)
    p.control_pending +=
        c.control && is_inconclusive(c.decision) && c.control_threads < smallest_detected ? 1 : 0;
  const Scenario& s = outcomes.front()->scenario;
  // Decided with the control's smaller doses pending: what stops it is still said, after
  // "decided", so the verdict reads as decided.
  const std::string state = p.decided
                                ? fmt::format("decided ({} smaller control dose{} undecided)",
                                              p.control_pending, p.control_pending == 1 ? "" : "s")
                                : "undecided";
  if (p.decided && p.control_pending == 0)
    p.stop = "decided";
  else if (s.rounds <= 1)
    p.stop = state + "; a study of one round is not extended";
  else if (s.neighbours_study)
    p.stop = state + "; a study of neighbours runs the rounds --concurrency-rounds gives";
  else if (s.study_budget_s <= 0)
    p.stop = state + "; no budget for more rounds (budget_s = 0)";
  else if (p.rounds >= s.study_max_rounds)
    p.stop = fmt::format("{} after max_rounds = {} rounds", state, s.study_max_rounds);
  else if (p.seconds + p.last_round_seconds > s.study_budget_s)
    p.stop =
        fmt::format("{}; budget spent ({:.0f} s of {:.0f} s, the next round would take {:.0f} s)",
                    state, p.seconds, s.study_budget_s, p.last_round_seconds);
  return p;
}

namespace {

// The scenarios of each study in `outcome`, in run order; a study with a failed scenario is
// marked incomplete.
struct StudyOutcomes {
  std::map<std::string, std::vector<const ScenarioOutcome*>> studies;
  std::map<std::string, bool> complete;
};

StudyOutcomes study_outcomes(const SuiteOutcome& outcome) {
  StudyOutcomes out;
  for (const ScenarioOutcome& s : outcome.scenarios) {
    if (s.scenario.study.empty()) continue;
    out.studies[s.scenario.study].push_back(&s);
    out.complete.try_emplace(s.scenario.study, true);
    if (s.failure || !s.timeline) out.complete[s.scenario.study] = false;
  }
  return out;
}

}  // namespace

std::vector<Scenario> next_study_rounds(const SuiteOutcome& outcome,
                                        const VerdictSettings& settings, std::ostream& log) {
  std::vector<Scenario> next;
  if (outcome.failure) return next;  // the suite stops at a failure
  const StudyOutcomes found = study_outcomes(outcome);
  for (const auto& [study, outcomes] : found.studies) {
    if (!found.complete.at(study)) continue;
    const auto verdict = judge_study(outcomes, settings);
    if (!verdict) continue;  // write_study_verdicts reports it
    const StudyProgress progress = study_progress(outcomes, *verdict);
    if (!progress.stop.empty()) continue;
    // Sequential stopping per condition: the baseline and the undecided conditions take the
    // next round; a decided one (a control's higher doses, often after a round or two) stops.
    std::vector<Scenario> last_round;
    std::size_t dropped = 0;
    for (const ScenarioOutcome* o : outcomes) {
      if (o->scenario.round != progress.rounds) continue;
      const auto cv = std::find_if(
          verdict->conditions.begin(), verdict->conditions.end(),
          [&](const ConditionVerdict& c) { return c.condition == o->scenario.condition; });
      if (cv != verdict->conditions.end() && !is_inconclusive(cv->decision)) {
        ++dropped;
        continue;
      }
      last_round.push_back(o->scenario);
    }
    log << fmt::format(
               "study {}: {} endpoints undecided and {} smaller control doses after {} rounds "
               "({:.0f} s of {:.0f} s); adding round {} for {} condition{} ({} decided)\n",
               study, progress.undecided, progress.control_pending, progress.rounds,
               progress.seconds, outcomes.front()->scenario.study_budget_s, progress.rounds + 1,
               last_round.size() - 1, last_round.size() == 2 ? "" : "s", dropped)
        << std::flush;
    for (Scenario& s : next_study_round(last_round)) next.push_back(std::move(s));
  }
  return next;
}

Status write_study_verdicts(const SuiteOutcome& outcome, const std::filesystem::path& out,
                            const VerdictSettings& settings, std::ostream& log) {
  const StudyOutcomes found = study_outcomes(outcome);
  for (const auto& [study, conditions] : found.studies) {
    if (!found.complete.at(study)) {
      log << "study " << study << ": not judged, a condition failed or did not run\n";
      continue;
    }
    auto verdict = judge_study(conditions, settings);
    if (!verdict) return verdict.error().with_context("study " + study + ": ");
    const std::filesystem::path directory = out / study;
    std::error_code ec;
    std::filesystem::create_directories(directory, ec);
    if (ec) return make_error("cannot create " + directory.string() + ": " + ec.message());
    GPUOVERLAP_TRY(write_file_atomically(directory / "verdict.csv", verdict_csv(*verdict)));
    const StudyProgress progress = study_progress(conditions, *verdict);
    // The benefit beside the cost: conditions that bind what they commit (bind_committed).
    const std::vector<StudyBenefit> benefits = study_benefits(conditions);
    std::string benefit_lines;
    nlohmann::json benefit_json = nlohmann::json::array();
    for (const StudyBenefit& b : benefits) {
      benefit_lines += "benefit of " + describe(b) + "\n";
      benefit_json.push_back(
          {{"condition", b.condition},
           {"workload", b.workload},
           {"clock", b.clock},
           {"rounds", b.rounds},
           {"ratio", b.ratio},
           {"ratio_low", b.ratio_low ? nlohmann::json(*b.ratio_low) : nullptr},
           {"ratio_high", b.ratio_high ? nlohmann::json(*b.ratio_high) : nullptr},
           {"call", b.call}});
    }
    const std::string summary =
        verdict->summary + benefit_lines +
        progress_lines(*verdict, progress, conditions.front()->scenario.rounds);
    nlohmann::json json = verdict_json(*verdict, settings);
    if (!benefits.empty()) json["benefit"] = benefit_json;
    json["summary"] = summary;
    json["progress"] = study_rounds_json(
        {conditions.front()->scenario.rounds, progress.rounds,
         std::round(progress.seconds * 10) / 10, conditions.front()->scenario.study_budget_s,
         conditions.front()->scenario.study_max_rounds, progress.decided,
         // Empty only when the run stopped before the study could go on.
         progress.stop.empty() ? "the run ended" : progress.stop});
    GPUOVERLAP_TRY(write_file_atomically(directory / "verdict.json", json.dump(2) + "\n"));
    log << "\nstudy " << study << " (" << verdict->rounds
        << " rounds; baseline: " << verdict->baseline << "; GPU durations on the "
        << verdict->gpu_clock << " clock; unit: " << verdict->unit << "; " << verdict->tests
        << " tests per condition):\n";
    log << fmt::format("  {:<22} {:<34} {:>9} {:>9} {:>9} {:>8} {:>8} {:>8}  {}\n", "condition",
                       "metric", "p50 ratio", "low", "high", "tail +", "low", "high", "verdict");
    auto percent = [](const std::optional<double>& v) {
      return v ? fmt::format("{:+.2f}%", 100.0 * *v) : std::string();
    };
    for (const VerdictRow& r : verdict->rows)
      log << fmt::format("  {:<22} {:<34} {:>9} {:>9} {:>9} {:>8} {:>8} {:>8}  {}\n", r.condition,
                         r.metric, number(r.ratio_p50), number(r.ci_low), number(r.ci_high),
                         percent(r.tail_excess), percent(r.tail_ci_low), percent(r.tail_ci_high),
                         to_string(r.decision));
    log << summary;
    log << "verdict: " << (directory / "verdict.csv").string() << "\n";
  }
  return ok_status();
}

}  // namespace gpuoverlap
