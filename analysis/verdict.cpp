#include "analysis/verdict.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <thread>

#include "analysis/bootstrap.h"
#include "core/atomic_file.h"
#include "timeline/export.h"
#include "timeline/statistics.h"

namespace gpuoverlap {

namespace {

bool background_overlapped(const FrameRecord& f) { return f.bg_managed + f.bg_unmanaged > 0; }

std::string number(const std::optional<double>& v) {
  return v && std::isfinite(*v) ? fmt::format("{:.4f}", *v) : "";
}

}  // namespace

std::vector<std::pair<std::string, std::vector<double>>> verdict_metrics(
    const Scenario& s, const ScenarioTimeline& timeline, const std::string& gpu_clock,
    bool active_only) {
  std::vector<std::pair<std::string, std::vector<double>>> out = {{"cpu_frame_us", {}},
                                                                  {"cpu_submit_us", {}},
                                                                  {"submit_to_start_us", {}},
                                                                  {"poll_gap_max_us", {}}};
  std::vector<bool> use(timeline.frames.empty() ? 0 : timeline.frames.back().frame + 1, false);
  for (const FrameRecord& f : timeline.frames) {
    if (f.status != RecordStatus::ok || (active_only && !background_overlapped(f))) continue;
    use[f.frame] = true;
    out[0].second.push_back(f.cpu_frame_us);
    out[1].second.push_back(f.cpu_submit_us);
    if (f.submit_to_start_us) out[2].second.push_back(*f.submit_to_start_us);
    if (f.poll_gap_max_us) out[3].second.push_back(*f.poll_gap_max_us);
  }
  std::vector<std::vector<double>> durations(s.workloads.size());
  for (const WorkloadFrameRecord& r : timeline.records) {
    if (r.status != RecordStatus::ok || r.frame >= use.size() || !use[r.frame]) continue;
    const auto start = start_on(r, gpu_clock), end = end_on(r, gpu_clock);
    if (start && end) durations[r.workload].push_back(*end - *start);
  }
  for (std::size_t w = 0; w < s.workloads.size(); ++w)
    out.emplace_back("gpu_duration_us:" + s.workloads[w].name, std::move(durations[w]));
  return out;
}

double rank_test_greater_p(const std::vector<double>& baseline,
                           const std::vector<double>& candidate) {
  const double n_a = static_cast<double>(baseline.size());
  const double n_b = static_cast<double>(candidate.size());
  if (baseline.empty() || candidate.empty()) return 1.0;
  struct Value {
    double v;
    bool candidate;
  };
  std::vector<Value> all;
  all.reserve(baseline.size() + candidate.size());
  for (double v : baseline) all.push_back({v, false});
  for (double v : candidate) all.push_back({v, true});
  std::sort(all.begin(), all.end(), [](const Value& x, const Value& y) { return x.v < y.v; });
  double rank_sum_b = 0, tie_term = 0;
  for (std::size_t i = 0; i < all.size();) {
    std::size_t j = i;
    while (j < all.size() && all[j].v == all[i].v) ++j;
    const double average_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;
    const double ties = static_cast<double>(j - i);
    tie_term += ties * ties * ties - ties;
    for (std::size_t k = i; k < j; ++k)
      if (all[k].candidate) rank_sum_b += average_rank;
    i = j;
  }
  const double n = n_a + n_b;
  const double u = rank_sum_b - n_b * (n_b + 1) / 2.0;
  const double mean = n_a * n_b / 2.0;
  const double variance = n_a * n_b / 12.0 * ((n + 1) - tie_term / (n * (n - 1)));
  if (variance <= 0) return 1.0;
  const double z = (u - mean - 0.5) / std::sqrt(variance);
  return 0.5 * std::erfc(z / std::sqrt(2.0));
}

namespace {

VerdictRow judge_metric(const std::string& condition, const std::string& metric,
                        const std::vector<double>& baseline, const std::vector<double>& sample,
                        const VerdictSettings& settings) {
  VerdictRow row;
  row.condition = condition;
  row.metric = metric;
  row.frames = sample.size();
  row.baseline_frames = baseline.size();
  if (baseline.size() < settings.min_frames || sample.size() < settings.min_frames) {
    row.verdict = "inconclusive";
    row.note = fmt::format("too few frames ({} and {}; at least {} each)", baseline.size(),
                           sample.size(), settings.min_frames);
    if (!baseline.empty()) row.baseline_p50 = *percentile(baseline, 50);
    if (!sample.empty()) row.p50 = *percentile(sample, 50);
    return row;
  }
  row.baseline_p50 = *percentile(baseline, 50);
  row.p50 = *percentile(sample, 50);
  row.baseline_p99 = *percentile(baseline, 99);
  row.p99 = *percentile(sample, 99);
  if (row.baseline_p50 > 0) row.ratio_p50 = row.p50 / row.baseline_p50;
  if (row.baseline_p99 > 0) row.ratio_p99 = row.p99 / row.baseline_p99;
  const std::vector<Interval> ci = bootstrap_percentile_ratios(
      baseline, sample, {50.0, 99.0}, settings.resamples, settings.confidence, settings.seed);
  if (row.ratio_p50) row.ci_low = ci[0].low, row.ci_high = ci[0].high;
  if (row.ratio_p99) row.p99_ci_low = ci[1].low, row.p99_ci_high = ci[1].high;
  row.rank_p = rank_test_greater_p(baseline, sample);
  if (!row.ratio_p50 || !row.ratio_p99) {
    row.verdict = "inconclusive";
    row.note = "the baseline's percentile is not positive; no ratio";
    return row;
  }
  // Bounds on the difference, from the ratio's interval, for the absolute floor.
  const double p50_diff_low = (*row.ci_low - 1) * row.baseline_p50;
  const double p50_diff_high = (*row.ci_high - 1) * row.baseline_p50;
  const double p99_diff_low = (*row.p99_ci_low - 1) * row.baseline_p99;
  const double p99_diff_high = (*row.p99_ci_high - 1) * row.baseline_p99;
  const bool p50_worse = *row.ci_low > 1 + settings.p50_margin &&
                         p50_diff_low > settings.min_difference_us && row.rank_p < settings.alpha;
  const bool p99_worse =
      *row.p99_ci_low > 1 + settings.p99_margin && p99_diff_low > settings.min_difference_us;
  const bool p50_fine =
      *row.ci_high <= 1 + settings.p50_margin || p50_diff_high <= settings.min_difference_us;
  const bool p99_fine =
      *row.p99_ci_high <= 1 + settings.p99_margin || p99_diff_high <= settings.min_difference_us;
  if (p50_worse || p99_worse) {
    row.verdict = "intrusive";
    row.note = p50_worse && p99_worse ? "median and p99 worse"
               : p50_worse            ? "median worse"
                                      : "p99 worse";
  } else if (p50_fine && p99_fine) {
    row.verdict = "non-intrusive";
  } else {
    row.verdict = "inconclusive";
    row.note = !p50_fine ? "the median's interval reaches past the margin"
                         : "the p99's interval reaches past the margin";
  }
  return row;
}

}  // namespace

namespace {

using Samples = std::vector<std::pair<std::string, std::vector<double>>>;

// The rounds of one condition, their samples concatenated metric by metric.
Samples pooled_metrics(const std::vector<const ScenarioOutcome*>& rounds,
                       const std::string& gpu_clock, bool active_only) {
  Samples pooled;
  for (const ScenarioOutcome* r : rounds) {
    Samples one = verdict_metrics(r->scenario, *r->timeline, gpu_clock, active_only);
    if (pooled.empty()) {
      pooled = std::move(one);
      continue;
    }
    for (std::size_t m = 0; m < pooled.size() && m < one.size(); ++m)
      pooled[m].second.insert(pooled[m].second.end(), one[m].second.begin(), one[m].second.end());
  }
  return pooled;
}

}  // namespace

Result<StudyVerdict> judge_study(const std::vector<const ScenarioOutcome*>& outcomes,
                                 const VerdictSettings& settings) {
  StudyVerdict out;
  // Conditions in first-seen order, each with its rounds.
  std::vector<std::pair<std::string, std::vector<const ScenarioOutcome*>>> conditions;
  std::string baseline_name;
  for (const ScenarioOutcome* o : outcomes) {
    if (!o->timeline) return make_error("condition '" + o->scenario.condition + "' has no results");
    if (!o->scenario.background) {
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
  if (baseline_name.empty()) return make_error("no baseline condition (one without [background])");
  const auto& baseline = *std::find_if(conditions.begin(), conditions.end(),
                                       [&](const auto& c) { return c.first == baseline_name; });
  out.study = outcomes.front()->scenario.study;
  out.rounds = std::max<std::uint32_t>(1, outcomes.front()->scenario.rounds);
  out.baseline = baseline_name;
  // Timestamps when the baseline has them for every workload, else the poll clock.
  out.gpu_clock = "ts";
  for (const ScenarioOutcome* r : baseline.second)
    for (const WorkloadFrameRecord& rec : r->timeline->records)
      if (rec.status == RecordStatus::ok && !(rec.ts_start_us && rec.ts_end_us))
        out.gpu_clock = "poll";
  const Samples baseline_metrics = pooled_metrics(baseline.second, out.gpu_clock, false);

  for (const auto& [name, rounds] : conditions) {
    if (name == baseline_name) continue;
    ConditionVerdict cv;
    cv.condition = name;
    cv.control = rounds.front()->scenario.background->unmanaged_threads > 0;
    for (const ScenarioOutcome* r : rounds) {
      cv.frames += r->timeline->frames.size();
      for (const FrameRecord& f : r->timeline->frames)
        if (background_overlapped(f)) ++cv.active_frames;
    }
    out.has_control = out.has_control || cv.control;
    const Samples metrics = pooled_metrics(rounds, out.gpu_clock, true);
    // Each metric's bootstrap is independent and seeded by itself, so judging them on
    // parallel threads gives the same rows as one after another (they took 13 s of an H100's
    // `run --all`, on one of its 16 cores).
    const std::size_t count = std::min(metrics.size(), baseline_metrics.size());
    std::vector<VerdictRow> judged(count);
    {
      std::atomic<std::size_t> next{0};
      auto work = [&] {
        for (std::size_t m = next++; m < count; m = next++)
          judged[m] = judge_metric(cv.condition, metrics[m].first, baseline_metrics[m].second,
                                   metrics[m].second, settings);
      };
      std::vector<std::jthread> threads;
      const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
      const std::size_t helpers = count > 1 ? std::min(count, cores) - 1 : 0;
      for (std::size_t t = 0; t < helpers; ++t) threads.emplace_back(work);
      work();
    }
    bool any_intrusive = false, all_fine = true;
    for (VerdictRow& row : judged) {
      row.control = cv.control;
      if (cv.active_frames < settings.min_frames && row.verdict != "intrusive") {
        row.verdict = "inconclusive";
        row.note = fmt::format("background work overlapped only {} of {} frames", cv.active_frames,
                               cv.frames);
      }
      any_intrusive = any_intrusive || row.verdict == "intrusive";
      all_fine = all_fine && row.verdict == "non-intrusive";
      out.rows.push_back(std::move(row));
    }
    cv.verdict = any_intrusive ? "intrusive" : all_fine ? "non-intrusive" : "inconclusive";
    if (cv.control && any_intrusive) out.control_detected = true;
    out.conditions.push_back(cv);
  }
  // No power: the positive control was not told apart from the baseline, so a condition that
  // looks non-intrusive may only show that this setup cannot see intrusion.
  if (out.has_control && !out.control_detected) {
    for (VerdictRow& row : out.rows)
      if (!row.control) row.verdict = "inconclusive (no power)";
    for (ConditionVerdict& cv : out.conditions)
      if (!cv.control) cv.verdict = "inconclusive (no power)";
  }
  for (const ConditionVerdict& cv : out.conditions)
    out.summary += fmt::format("{}{}: {} ({} of {} frames overlapped background work)\n",
                               cv.condition, cv.control ? " (positive control)" : "", cv.verdict,
                               cv.active_frames, cv.frames);
  if (!out.has_control)
    out.summary += "no positive control in this study: a non-intrusive verdict is unchecked\n";
  else
    out.summary += out.control_detected
                       ? "positive control detected: the study can see intrusion\n"
                       : "positive control NOT detected: inconclusive (no power)\n";
  return out;
}

std::string verdict_csv(const StudyVerdict& v) {
  std::string out = csv_line(kVerdictColumns);
  for (const VerdictRow& r : v.rows)
    out += fmt::format(
        "{},{},{:.4f},{:.4f},{},{},{},{:.4f},{:.4f},{},{},{},{},{:.3g},{},{},{},{}\n",
        csv_field(r.condition), csv_field(r.metric), r.baseline_p50, r.p50, number(r.ratio_p50),
        number(r.ci_low), number(r.ci_high), r.baseline_p99, r.p99, number(r.ratio_p99),
        csv_field(r.verdict), number(r.p99_ci_low), number(r.p99_ci_high), r.rank_p, r.frames,
        r.baseline_frames, r.control ? 1 : 0, csv_field(r.note));
  return out;
}

nlohmann::json verdict_json(const StudyVerdict& v, const VerdictSettings& s) {
  nlohmann::json conditions = nlohmann::json::array();
  for (const ConditionVerdict& c : v.conditions)
    conditions.push_back({{"condition", c.condition},
                          {"control", c.control},
                          {"verdict", c.verdict},
                          {"frames", c.frames},
                          {"active_frames", c.active_frames}});
  return {{"study", v.study},
          {"baseline", v.baseline},
          {"rounds", v.rounds},
          {"gpu_clock", v.gpu_clock},
          {"has_control", v.has_control},
          {"control_detected", v.control_detected},
          {"conditions", conditions},
          {"summary", v.summary},
          {"settings",
           {{"p50_margin", s.p50_margin},
            {"p99_margin", s.p99_margin},
            {"alpha", s.alpha},
            {"min_difference_us", s.min_difference_us},
            {"confidence", s.confidence},
            {"resamples", s.resamples},
            {"min_frames", s.min_frames},
            {"rule",
             "intrusive: the ratio's interval lies above 1 + margin (median: and the one-sided "
             "Mann-Whitney p < alpha), and the difference exceeds min_difference_us; "
             "non-intrusive: both intervals lie below 1 + margin (or the difference's bound is "
             "under min_difference_us); otherwise inconclusive. Conditions use only frames "
             "their background work overlapped."}}}};
}

Status write_study_verdicts(const SuiteOutcome& outcome, const std::filesystem::path& out,
                            const VerdictSettings& settings, std::ostream& log) {
  std::map<std::string, std::vector<const ScenarioOutcome*>> studies;
  std::map<std::string, bool> complete;
  for (const ScenarioOutcome& s : outcome.scenarios) {
    if (s.scenario.study.empty()) continue;
    studies[s.scenario.study].push_back(&s);
    complete.try_emplace(s.scenario.study, true);
    if (s.failure || !s.timeline) complete[s.scenario.study] = false;
  }
  for (const auto& [study, conditions] : studies) {
    if (!complete[study]) {
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
    GPUOVERLAP_TRY(write_file_atomically(directory / "verdict.json",
                                         verdict_json(*verdict, settings).dump(2) + "\n"));
    log << "\nstudy " << study << " (" << verdict->rounds
        << " rounds; baseline: " << verdict->baseline << "; GPU durations on the "
        << verdict->gpu_clock << " clock):\n";
    log << fmt::format("  {:<22} {:<34} {:>9} {:>9} {:>9} {:>9}  {}\n", "condition", "metric",
                       "p50 ratio", "CI low", "CI high", "p99 ratio", "verdict");
    for (const VerdictRow& r : verdict->rows)
      log << fmt::format("  {:<22} {:<34} {:>9} {:>9} {:>9} {:>9}  {}\n", r.condition, r.metric,
                         number(r.ratio_p50), number(r.ci_low), number(r.ci_high),
                         number(r.ratio_p99), r.verdict);
    log << verdict->summary << "verdict: " << (directory / "verdict.csv").string() << "\n";
  }
  return ok_status();
}

}  // namespace gpuoverlap
