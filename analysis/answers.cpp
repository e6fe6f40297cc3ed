#include "analysis/answers.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "analysis/bootstrap.h"
#include "analysis/csv_table.h"
#include "analysis/verdict.h"
#include "core/input_file.h"
#include "timeline/export.h"
#include "timeline/statistics.h"

namespace gpuoverlap {

namespace {

struct Span {
  std::string queue;
  QueueType queue_type = QueueType::direct;
  double start_us = 0, end_us = 0;
};

// Each ok frame's workload spans on `clock`, by frame.
std::map<std::uint32_t, std::vector<Span>> spans_by_frame(const LoadedScenario& s, Clock clock) {
  std::map<std::uint32_t, std::vector<Span>> frames;
  for (const RecordRow& r : s.records) {
    if (r.status != RecordStatus::ok) continue;
    const auto start = start_on(r, clock), end = end_on(r, clock);
    if (start && end) frames[r.frame].push_back({r.queue, r.queue_type, *start, *end});
  }
  return frames;
}

template <typename Pairs>
OverlapCount count_overlap(const LoadedScenario& s, Clock clock, Pairs counts) {
  OverlapCount out;
  std::vector<double> longest;
  for (const auto& [frame, spans] : spans_by_frame(s, clock)) {
    if (spans.size() < 2) continue;
    ++out.frames;
    double best = 0;
    for (std::size_t i = 0; i < spans.size(); ++i)
      for (std::size_t j = i + 1; j < spans.size(); ++j)
        if (counts(spans[i], spans[j]))
          best = std::max(best, std::min(spans[i].end_us, spans[j].end_us) -
                                    std::max(spans[i].start_us, spans[j].start_us));
    if (best > 0) longest.push_back(best);
  }
  out.overlapped = longest.size();
  if (!longest.empty()) out.overlap_p50_us = *percentile(longest, 50);
  return out;
}

std::string clock_name(Clock clock) {
  return clock == Clock::ts    ? "timestamp clock"
         : clock == Clock::clk ? "shader clock"
                               : "poll clock";
}

// " Figure: [plots/x/overlap.png](plots/x/overlap.png)." (after `label`) for the first of
// `relative_pngs` that plot.py made (the figure drawn for this answer first, then a general
// one), else "".
std::string figure(const LoadedRun& run, std::initializer_list<std::string> relative_pngs,
                   std::string_view label = "Figure") {
  for (const std::string& relative_png : relative_pngs) {
    std::error_code ec;
    if (std::filesystem::exists(run.directory / relative_png, ec))
      return fmt::format(" {0}: [{1}]({1}).", label, relative_png);
  }
  return "";
}

std::string frames_word(const OverlapCount& c) {
  return c.overlapped == c.frames ? "Yes" : c.overlapped == 0 ? "No" : "Sometimes";
}

// Where the device has one queue for both, the COMPUTE queue cannot overlap the DIRECT one.
bool compute_shares_direct(const LoadedScenario& s) {
  return std::any_of(s.meta.queues.begin(), s.meta.queues.end(), [](const MetaQueue& q) {
    return q.queue_type == QueueType::compute && q.shares_queue_of;
  });
}

// "**Yes**: <what> ran at the same time in N of M frames of `s` (median overlap X µs), on the
// <clock>." and the figure, after `note` (the caveat of this answer, may be empty).
void overlap_answer(std::string& out, const LoadedRun& run, const LoadedScenario& s, Clock clock,
                    const OverlapCount& c, const char* what, const std::string& note) {
  // Rounds measured alone and pooled (run --concurrency-rounds) are named as such.
  const bool pooled = relative_of(run, s) != s.name;
  out += fmt::format("**{}**: {} ran at the same time in {} of {} frames of `{}`{}", frames_word(c),
                     what, c.overlapped, c.frames, s.name,
                     pooled ? " (its rounds measured alone, pooled)" : "");
  if (c.overlapped > 0) out += fmt::format(" (median overlap {:.1f} µs)", c.overlap_p50_us);
  out += fmt::format(", on the {}.", clock_name(clock)) + note;
  const std::string plots = "plots/" + relative_of(run, s);
  out += figure(run, {plots + "/overlap.png", plots + "/timeline.png"}) + "\n\n";
}

// The scenario answering for `name`: run on its own, or its rounds alone pooled.
const LoadedScenario* answering(const AnswerScenarios& scenarios, const std::string& name) {
  const AnswerScenario* entry = scenarios.find(name);
  return entry ? entry->scenario : nullptr;
}

void answer_direct_compute(std::string& out, const LoadedRun& run,
                           const AnswerScenarios& scenarios) {
  out += "**1. Does DIRECT overlap COMPUTE?** ";
  const LoadedScenario* s = answering(scenarios, "default");
  if (!s) s = answering(scenarios, "high-priority-compute");
  const std::optional<Clock> clock = s ? answer_clock(*s) : std::nullopt;
  if (!s || !clock) {
    out += "Not measured: run `default`.\n\n";
    return;
  }
  overlap_answer(out, run, *s, *clock, direct_compute_overlap(*s, *clock),
                 "a DIRECT and a COMPUTE workload",
                 compute_shares_direct(*s) ? " Here the COMPUTE queue is the DIRECT queue's device "
                                             "queue (the device has one), so it cannot overlap."
                                           : "");
}

void answer_same_queue(std::string& out, const LoadedRun& run, const AnswerScenarios& scenarios) {
  out += "**2. Do dispatches on one queue overlap without barriers?** ";
  const LoadedScenario* s = answering(scenarios, "no-barriers");
  const std::optional<Clock> clock = s ? answer_clock(*s) : std::nullopt;
  if (!s || !clock) {
    out += "Not measured: run `no-barriers`.\n\n";
    return;
  }
  overlap_answer(out, run, *s, *clock, same_queue_overlap(*s, *clock), "two workloads of one queue",
                 s->meta.timestamp_queries
                     ? " Timestamp queries were on; on some drivers they serialise a queue's "
                       "work (`--no-timestamps` measures without them)."
                     : "");
}

// Each ok frame's GPU span from frames.csv (gpu_span_us: first start to last end, on the
// timestamps where the frame has them, else the poll clock), the frame-level endpoint the
// study verdicts use too. Empty for results without frames.csv.
std::vector<double> gpu_spans_us(const LoadedScenario& s) {
  std::vector<double> out;
  for (const LoadedFrame& f : s.frames)
    if (f.ok && f.gpu_span_us) out.push_back(*f.gpu_span_us);
  return out;
}

// Each frame's span on `clock` from its records: first start to last end, over the frames whose
// every record is ok and has the clock (a missing workload would shorten the span) and, on the
// poll clock, none of whose stamps is disturbed.
std::vector<double> clock_spans_us(const LoadedScenario& s, Clock clock) {
  struct FirstLast {
    double start_us = 0, end_us = 0;
    bool complete = true;
  };
  std::map<std::uint32_t, FirstLast> frames;
  for (const RecordRow& r : s.records) {
    const auto start = start_on(r, clock), end = end_on(r, clock);
    const bool usable =
        r.status == RecordStatus::ok && start && end &&
        !disturbed_on(r.poll_disturbed, clock, kPollStartDisturbed | kPollEndDisturbed);
    auto [at, fresh] = frames.try_emplace(r.frame);
    if (!usable) {
      at->second.complete = false;
      continue;
    }
    at->second.start_us = fresh ? *start : std::min(at->second.start_us, *start);
    at->second.end_us = fresh ? *end : std::max(at->second.end_us, *end);
  }
  std::vector<double> out;
  for (const auto& [frame, span] : frames)
    if (span.complete) out.push_back(span.end_us - span.start_us);
  return out;
}

// "Enhanced against legacy on identical work": one clause per twin, the difference, its
// interval and the verdict against the A/A margin.
std::string twins_paragraph(const LoadedRun& run) {
  std::vector<BarrierTwin> twins = barrier_twins(run);
  std::erase_if(twins, [](const BarrierTwin& t) { return t.clock.has_value(); });
  if (twins.empty()) return "";
  std::string out = fmt::format(
      "\n\nThe same work behind another barrier than its legacy twin's, the frame's GPU span p50 "
      "(`gpu_span_us`: first start to last end; 95 % interval of the difference over this run's "
      "frames, judged "
      "against a margin of ±{:g} % of the span, the run-to-run noise): ",
      kTwinMarginOfSpan * 100);
  for (std::size_t i = 0; i < twins.size(); ++i) {
    const BarrierTwin& t = twins[i];
    const TwinOutcome outcome = t.outcome();
    out += fmt::format(
        "{}`{}` ({}) {:.1f} µs against `{}` {:.1f} µs, {:+.1f} µs [{:+.1f}, {:+.1f}]: {}",
        i ? "; " : "", t.scenario, t.barrier, t.span_p50_us, t.legacy_twin, t.twin_span_p50_us,
        t.span_p50_us - t.twin_span_p50_us, t.difference_low_us, t.difference_high_us,
        outcome == TwinOutcome::same ? fmt::format("the same (within ±{:.1f} µs)", t.margin_us())
        : outcome == TwinOutcome::undecided
            ? std::string("undecided")
            : "**" + std::string(name_of(kTwinOutcomeNames, outcome)) + "**");
  }
  return out + ". For a claim, repeat the run and `compare` the runs.";
}

void answer_barriers(std::string& out, const LoadedRun& run) {
  out += "**3. What does each barrier kind cost?** ";
  struct Cost {
    std::string scenario, barrier;
    double gap_p50_us;
  };
  std::vector<Cost> costs;
  std::optional<Clock> used;
  const std::vector<BarrierGap> gaps = barrier_gaps(run);
  // barrier-cost isolates each kind: producer "P <kind>" then consumer "C <kind>", the same
  // small dispatch on both sides, so the gap is the barrier's own cost.
  for (const BarrierGap& g : gaps)
    if (g.scenario == "barrier-cost" && g.producer.rfind("P ", 0) == 0 &&
        g.consumer.rfind("C ", 0) == 0 && g.producer.substr(2) == g.consumer.substr(2)) {
      if (!used) used = g.clock;
      costs.push_back({g.consumer.substr(2), g.barrier, *percentile(g.values_us, 50)});
    }
  if (!costs.empty()) {
    const auto [cheapest, dearest] = std::minmax_element(
        costs.begin(), costs.end(),
        [](const Cost& a, const Cost& b) { return a.gap_p50_us < b.gap_p50_us; });
    out += fmt::format(
        "From a producer's end to its consumer's start across each barrier kind (`barrier-cost`: "
        "the same small dispatch on both sides), p50 on the {}: ",
        clock_name(*used));
    for (std::size_t i = 0; i < costs.size(); ++i)
      out += fmt::format("{}{} {:.1f} µs", i ? ", " : "", costs[i].scenario, costs[i].gap_p50_us);
    out += fmt::format(
        ". Cheapest: {}; dearest: {} (+{:.1f} µs). Every dependency: the barrier "
        "table below.",
        cheapest->scenario, dearest->scenario, dearest->gap_p50_us - cheapest->gap_p50_us);
    out += figure(run, {"plots/barrier-cost.png", "plots/barrier-cost/timeline.png"}) +
           twins_paragraph(run) + "\n\n";
    return;
  }
  for (const BarrierGap& g : gaps) {
    if (g.scenario.rfind("three-dispatches", 0) != 0) continue;
    if (!used) used = g.clock;
    // One figure per scenario: its gaps pooled (both dependencies carry the same barrier).
    auto found = std::find_if(costs.begin(), costs.end(),
                              [&](const Cost& c) { return c.scenario == g.scenario; });
    if (found != costs.end()) continue;
    std::vector<double> pooled;
    for (const BarrierGap& same : gaps)
      if (same.scenario == g.scenario)
        pooled.insert(pooled.end(), same.values_us.begin(), same.values_us.end());
    costs.push_back({g.scenario, g.barrier.empty() ? "?" : g.barrier, *percentile(pooled, 50)});
  }
  if (costs.empty()) {
    const std::string twins = twins_paragraph(run);
    out += "Not measured: run `barrier-cost` or the `three-dispatches` presets (`run --all`)." +
           twins + "\n\n";
    return;
  }
  std::sort(costs.begin(), costs.end(),
            [](const Cost& a, const Cost& b) { return a.gap_p50_us < b.gap_p50_us; });
  out += fmt::format(
      "Between dependent dispatches (the `three-dispatches` family), the consumer starts this "
      "long after its producer ends, p50 on the {}: ",
      clock_name(*used));
  for (std::size_t i = 0; i < costs.size(); ++i)
    out += fmt::format("{}`{}` ({}) {:.1f} µs", i ? ", " : "", costs[i].scenario, costs[i].barrier,
                       costs[i].gap_p50_us);
  out += fmt::format(". Cheapest: `{}`; dearest: `{}`. Every dependency: the barrier table below.",
                     costs.front().scenario, costs.back().scenario);
  out +=
      figure(run, {"plots/barrier-cost.png", "plots/" + costs.back().scenario + "/timeline.png"}) +
      twins_paragraph(run) + "\n\n";
}

// A study of scheduling policies (a condition scheduled other than the spec's runtime)
// answers which policy to use first: "`S` on this machine and kernel: `X`: non-intrusive, 4.1
// compiles/s (also non-intrusive: `Y`, 2.0); the spec's `idle`: intrusive, 3.2 compiles/s. "
// A starved condition is never the answer. "" for any other study.
std::string policy_sentence(const std::string& study, const LoadedStudyVerdict& v) {
  struct Judged {
    std::string condition;
    Decision decision = Decision::inconclusive;
    double compiles_per_s = 0;
    bool starved = false, spec = false;
    std::optional<double> commit_ms;  // commit_at_frame's median time to the event
    // ", a commit in 412 ms" where the condition waited on one.
    std::string commit() const {
      return commit_ms ? fmt::format(", a commit in {:.0f} ms", *commit_ms) : std::string();
    }
  };
  std::vector<Judged> judged;
  bool policies = false;
  for (const ConditionVerdict& c : v.verdict.conditions) {
    if (c.control || c.null_control || c.negative_control || c.spinners || c.scheduling.empty())
      continue;
    Judged j{c.condition, c.decision,        c.progress.compiles_per_s,
             c.starved,   c.spec_scheduling, percentile(c.progress.commit_to_event_ms, 50)};
    policies = policies || !j.spec;
    judged.push_back(std::move(j));
  }
  if (!policies) return {};
  std::vector<const Judged*> good;
  for (const Judged& j : judged)
    if (j.decision == Decision::non_intrusive && !j.starved && j.compiles_per_s > 0)
      good.push_back(&j);
  std::sort(good.begin(), good.end(),
            [](const Judged* a, const Judged* b) { return a->compiles_per_s > b->compiles_per_s; });
  std::string out = fmt::format("`{}` on this machine and kernel: ", study);
  if (good.empty()) {
    out += "**no policy was non-intrusive with compiles done**";
  } else {
    out += fmt::format("`{}`: **non-intrusive**, {:.1f} compiles/s{}", good.front()->condition,
                       good.front()->compiles_per_s, good.front()->commit());
    std::vector<std::string> others;
    for (std::size_t k = 1; k < good.size(); ++k)
      others.push_back(fmt::format("`{}`, {:.1f}", good[k]->condition, good[k]->compiles_per_s));
    if (!others.empty()) out += fmt::format(" (also non-intrusive: {})", fmt::join(others, "; "));
  }
  for (const Judged& j : judged)
    if (j.spec) {
      out += fmt::format("; the spec's `{}`: {}, {:.1f} compiles/s{}", j.condition,
                         j.starved ? "non-intrusive but starved" : to_string(j.decision),
                         j.compiles_per_s, j.commit());
      break;
    }
  return out + ". ";
}

void answer_background(std::string& out, const LoadedRun& run,
                       const std::vector<StudyFile>& all_studies) {
  out += "**4. Is background processing non-intrusive?** ";
  std::vector<StudyFile> studies;
  std::copy_if(all_studies.begin(), all_studies.end(), std::back_inserter(studies),
               [](const StudyFile& f) { return !f.neighbours; });
  if (studies.empty()) {
    out += "Not measured: run `non-intrusiveness`.\n\n";
    return;
  }
  for (std::size_t k = 0; k < studies.size(); ++k) {
    const std::string& study = studies[k].name;
    if (k > 0) out += " ";
    if (!studies[k].verdict) {
      out += fmt::format("`{}`: no verdict ({}).", study, no_verdict_reason(run, studies[k]));
      continue;
    }
    const LoadedStudyVerdict& v = *studies[k].verdict;
    std::string judged, null_control, negative_control;
    out += policy_sentence(study, v);
    // A paced frame's late frames beside the baseline's: what a player would see.
    const std::optional<PacingSummary>& baseline_late = v.verdict.baseline_pacing;
    for (std::size_t i = 0; i < v.verdict.conditions.size(); ++i) {
      const ConditionVerdict& c = v.verdict.conditions[i];
      if (c.control) continue;
      if (c.null_control) {
        // The A/A test says whether an intrusive call can be trusted, not how a policy did.
        null_control = c.decision == Decision::intrusive
                           ? "; the null control (the baseline again) was **called intrusive**: "
                             "an intrusive call on this host may be false"
                           : "; the null control (the baseline again) was not called intrusive";
        continue;
      }
      if (c.negative_control) {
        negative_control =
            c.decision == Decision::intrusive
                ? "; **harness fault**: the negative control (idle-priority threads on every "
                  "foreground CPU) was called intrusive, so the measurement itself disturbs the "
                  "frame and no call above can be trusted"
                : "; the negative control (idle-priority threads on every foreground CPU) was "
                  "not called intrusive";
        continue;
      }
      judged += fmt::format("{}{} **{}**", judged.empty() ? "" : ", ", c.condition,
                            to_string(c.decision));
      std::vector<std::string> details;
      const std::optional<PacingSummary>& late = c.pacing;
      if (late && baseline_late && late->frames > 0 && baseline_late->frames > 0)
        details.push_back(
            fmt::format("{:.0f} % of frames late, baseline {:.0f} %",
                        100.0 * static_cast<double>(late->late) / static_cast<double>(late->frames),
                        100.0 * static_cast<double>(baseline_late->late) /
                            static_cast<double>(baseline_late->frames)));
      // What an undecided call could have seen: the reader's "how small an effect is ruled out".
      if (is_inconclusive(c.decision))
        if (std::string line = describe_resolvable(c); !line.empty())
          details.push_back(std::move(line));
      // Spinners run no compiles: a rate of 0 would read as a policy that starved.
      if (c.spinners)
        details.push_back("idle-priority spinners, no compiles");
      else if (v.has_compile_rate[i])
        details.push_back(fmt::format("{:.1f} compiles/s{}", c.progress.compiles_per_s,
                                      c.starved ? ", starved" : ""));
      // What the compiles cost their threads (older files lack the figures).
      if (std::string line = describe_compile_cost(c.progress); !line.empty())
        details.push_back(std::move(line));
      // Where the time went (analysis/time_account.h), when the frames had the loop's phases.
      if (c.time_account) details.push_back(c.time_account->line);
      // Who took the frame loop's CPU and how, by the kernel's record (run --sched-trace).
      if (c.sched) details.push_back(c.sched->line);
      if (!details.empty()) judged += fmt::format(" ({})", fmt::join(details, "; "));
    }
    out += fmt::format("`{}`: {}", study, judged.empty() ? "no condition judged" : judged);
    out += null_control;
    out += negative_control;
    if (v.verdict.has_control) {
      if (v.verdict.control_detected && v.verdict.detected_from_threads)
        out += fmt::format("; the positive control was detected from {} normal-priority thread{}",
                           *v.verdict.detected_from_threads,
                           *v.verdict.detected_from_threads == 1 ? "" : "s");
      else
        out += "; the positive control was **not detected**: the study had no power";
      if (must_intrude_reached(v.verdict))
        out += fmt::format("; the dose that must intrude, {} threads, was {}",
                           *v.verdict.must_intrude_threads,
                           v.verdict.must_intrude_detected ? "detected" : "**not detected**");
    }
    if (v.rounds) out += fmt::format("; {} rounds, {}", v.rounds->run, v.rounds->stop);
    out += ".";
    // The forest plot (effects against the margins) where plot.py drew one, else the boxes; and
    // the control's dose-response curve.
    out += figure(run, {"plots/" + study + "/forest.png", "plots/" + study + "/verdict.png"});
    out += figure(run, {"plots/" + study + "/dose-response.png"}, "Dose-response");
    out += figure(run, {"plots/" + study + "/policies.png"}, "Intrusion against progress");
  }
  out += "\n\n";
}

// 45 µs, 1.3 ms, 54.7 ms: a latency as a reader compares them.
std::string latency_text(double us) {
  return us < 1000 ? fmt::format("{:.0f} µs", us) : fmt::format("{:.1f} ms", us / 1000.0);
}

// Lowest first; a cell whose priority meta.json did not say, last.
int priority_rank(const std::optional<QueuePriority>& priority) {
  return priority ? static_cast<int>(*priority) : 3;
}

std::string class_gloss(const std::optional<preemption::PreemptionClass>& preemption_class) {
  if (preemption_class == preemption::PreemptionClass::preempts)
    return "**preempts** (p99 under 100 µs)";
  if (preemption_class == preemption::PreemptionClass::coarse)
    return "**coarse** (p99 under the period)";
  if (preemption_class == preemption::PreemptionClass::blocked)
    return "**blocked** (p99 past the period: the urgent job waits for the load's work)";
  return "**" + name_or_blank(preemption_class) + "**";
}

}  // namespace

std::string priority_text(const std::optional<QueuePriority>& priority) {
  return priority ? std::string(to_string(*priority)) : std::string("?");
}

std::string name_or_blank(const std::optional<preemption::PreemptionClass>& preemption_class) {
  return preemption_class
             ? std::string(name_of(preemption::kPreemptionClassNames, *preemption_class))
             : std::string();
}

std::string preemption_load_line(const std::string& load, preemption::ProcessMode process,
                                 std::vector<const PreemptionCell*> cells) {
  std::sort(cells.begin(), cells.end(), [](const PreemptionCell* a, const PreemptionCell* b) {
    return priority_rank(a->priority) < priority_rank(b->priority);
  });
  std::string line = fmt::format(
      "`{}`{}: ", load,
      process == preemption::ProcessMode::same ? "" : " (the load in a second process)");
  const bool one_class = std::all_of(cells.begin(), cells.end(), [&](const PreemptionCell* c) {
    return c->preemption_class == cells.front()->preemption_class;
  });
  std::vector<std::string> figures;
  for (const PreemptionCell* c : cells)
    figures.push_back(fmt::format("{}{} {} / {}", priority_text(c->priority),
                                  c->priority_granted != c->priority && c->priority_granted
                                      ? " (granted " + priority_text(c->priority_granted) + ")"
                                      : "",
                                  latency_text(c->p50_us), latency_text(c->p99_us)));
  if (one_class) {
    line += class_gloss(cells.front()->preemption_class) +
            (cells.size() > 1 ? " at every priority" : "") +
            fmt::format(", p50 / p99 {}", fmt::join(figures, ", "));
  } else {
    std::vector<std::string> classes;
    for (std::size_t i = 0; i < cells.size(); ++i)
      classes.push_back(figures[i] + " **" + name_or_blank(cells[i]->preemption_class) + "**");
    line += fmt::format("p50 / p99 {}", fmt::join(classes, ", "));
  }
  // Did priority change anything: the highest priority's p50 and p99 against the lowest's. A
  // factor below 1.5 either way is within what one run of each can tell apart.
  if (cells.size() > 1) {
    const PreemptionCell& low = *cells.front();
    const PreemptionCell& high = *cells.back();
    const double p50_ratio = low.p50_us > 0 ? high.p50_us / low.p50_us : 1.0;
    const double p99_ratio = low.p99_us > 0 ? high.p99_us / low.p99_us : 1.0;
    const auto beyond = [](double ratio) { return ratio < 1 / 1.5 || ratio > 1.5; };
    // 0.046, 0.75, 1.3, 12, 123: a ratio as a reader compares them.
    const auto ratio_text = [](double r) {
      return r >= 10 ? fmt::format("{:.0f}", r) : fmt::format("{:.2g}", r);
    };
    if (low.preemption_class == high.preemption_class && !beyond(p50_ratio) && !beyond(p99_ratio))
      line += fmt::format("; priority changed nothing ({} against {}: within 1.5x)",
                          priority_text(high.priority), priority_text(low.priority));
    else
      line +=
          fmt::format("; {} against {}: p50 ×{}, p99 ×{} ({})", priority_text(high.priority),
                      priority_text(low.priority), ratio_text(p50_ratio), ratio_text(p99_ratio),
                      p50_ratio <= 1 && p99_ratio <= 1   ? "priority helps"
                      : p50_ratio >= 1 && p99_ratio >= 1 ? "priority made it slower"
                                                         : "the median and the tail moved apart");
  }
  double misses = 0;
  for (const PreemptionCell* c : cells) misses += c->misses;
  if (misses > 0)
    line += fmt::format("; {:.0f} urgent jobs finished later than their period", misses);
  return line;
}

namespace {

void answer_preemption(std::string& out, const LoadedRun& run, const PreemptionCells& read) {
  out += "**5. How fast does high-priority compute get the GPU?** ";
  // One line per load (and process mode), in run order: a load's class decides whether
  // priority can help at all.
  std::vector<std::pair<preemption::ProcessMode, std::string>> order;  // process, load
  std::map<std::pair<preemption::ProcessMode, std::string>, std::vector<const PreemptionCell*>>
      groups;
  for (const PreemptionCell& c : read.cells) {
    const std::pair key{c.process, c.load};
    if (!groups.contains(key)) order.push_back(key);
    groups[key].push_back(&c);
  }
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return (a.first == preemption::ProcessMode::same) > (b.first == preemption::ProcessMode::same);
  });
  if (groups.empty()) {
    out += read.damaged.empty() ? "Not measured: run `preemption-matrix`.\n\n"
                                : fmt::format(
                                      "No latency could be read (`{}/summary.csv` is "
                                      "damaged).\n\n",
                                      read.damaged.front());
    return;
  }
  out +=
      "From the urgent job's submit to its first thread, one line per load the urgent job "
      "ran beside:";
  const PreemptionCell* worst = nullptr;
  for (const auto& key : order) {
    const std::vector<const PreemptionCell*>& cells = groups[key];
    out += "\n- " + preemption_load_line(key.second, key.first, cells);
    for (const PreemptionCell* c : cells)
      if (!worst || c->p99_us > worst->p99_us) worst = c;
  }
  if (worst) {
    // A matrix's heat map where plot.py drew one, else the slowest cell's own plot.
    const auto slash = worst->relative.rfind('/');
    const std::string matrix =
        slash == std::string::npos
            ? ""
            : figure(run, {"plots/" + worst->relative.substr(0, slash) + "/matrix.png"});
    const std::string shown =
        matrix.empty() ? figure(run, {"plots/" + worst->relative + "/preemption.png"}) : matrix;
    if (!shown.empty()) out += "\n- The slowest cell: `" + worst->relative + "`." + shown;
  }
  out += "\n\n";
}

}  // namespace

std::string relative_of(const LoadedRun& run, const LoadedScenario& s) {
  const std::string relative = s.directory.lexically_relative(run.directory).generic_string();
  return relative == "." || relative.empty() ? s.name : relative;
}

bool is_top_level(const LoadedRun& run, const LoadedScenario& s) {
  return relative_of(run, s).find('/') == std::string::npos;
}

PreemptionCells preemption_cells(const LoadedRun& run) {
  PreemptionCells out;
  for (const LoadedScenario& s : run.scenarios) {
    if (s.kind != ScenarioKind::preemption || !s.meta.preemption) continue;
    const MetaPreemption& p = *s.meta.preemption;
    auto priority = [](const MetaText& name) {
      return name ? value_of(kQueuePriorityNames, *name) : std::nullopt;
    };
    try {
      const auto summary = read_csv((s.directory / "summary.csv").string(), kSummaryColumns);
      std::optional<PreemptionCell> cell;
      for (const Clock clock : {Clock::poll, Clock::ts})
        for (std::size_t r = 0; r < summary.rows.size() && !cell; ++r)
          if (summary.at(r, "workload") == "urgent" && summary.at(r, "clock") == to_string(clock)) {
            const auto p50 = summary.number(r, "latency_p50_us");
            const auto p99 = summary.number(r, "latency_p99_us");
            if (!p50 || !p99) continue;
            cell = PreemptionCell{
                relative_of(run, s),
                p.load.value_or("?"),
                priority(p.priority),
                priority(p.priority_granted),
                p.process ? value_of(preemption::kProcessModeNames, *p.process)
                                .value_or(preemption::ProcessMode::same)
                          : preemption::ProcessMode::same,
                clock,
                value_of(preemption::kPreemptionClassNames, summary.at(r, "preemption")),
                *p50,
                *p99,
                summary.number(r, "deadline_misses").value_or(0),
                summary.number(r, "load_slowdown")};
          }
      if (cell) out.cells.push_back(*cell);
    } catch (const std::exception&) {
      out.damaged.push_back(relative_of(run, s));
    }
  }
  return out;
}

namespace {

// A neighbours study's round measured alone: its study's name; nullopt for any other scenario.
std::optional<std::string> alone_round_of(const LoadedScenario& s) {
  if (!s.study || s.study->kind != StudyKind::neighbours || s.study->condition != "alone")
    return std::nullopt;
  return s.study->name;
}

// `into` followed by `round`, whose frames are numbered after `into`'s last.
void append_round(LoadedScenario& into, const LoadedScenario& round) {
  std::uint32_t next = 0;
  for (const RecordRow& r : into.records) next = std::max(next, r.frame + 1);
  for (const LoadedFrame& f : into.frames) next = std::max(next, f.frame + 1);
  for (RecordRow r : round.records) {
    r.frame += next;
    into.records.push_back(std::move(r));
  }
  for (LoadedFrame f : round.frames) {
    f.frame += next;
    into.frames.push_back(f);
  }
}

}  // namespace

const AnswerScenario* AnswerScenarios::find(const std::string& name) const {
  for (const AnswerScenario& e : entries)
    if (e.name == name) return &e;
  return nullptr;
}

AnswerScenarios answer_scenarios(const LoadedRun& run) {
  AnswerScenarios out;
  for (const LoadedScenario& s : run.scenarios) {
    if (is_top_level(run, s)) {
      out.entries.push_back({relative_of(run, s), &s, false});
      continue;
    }
    const std::optional<std::string> study = alone_round_of(s);
    if (!study || !s.has_records) continue;
    const auto it = std::find_if(out.entries.begin(), out.entries.end(),
                                 [&](const AnswerScenario& e) { return e.name == *study; });
    if (it == out.entries.end()) {
      out.pooled.push_back(std::make_unique<LoadedScenario>(s));
      out.pooled.back()->name = *study;
      out.entries.push_back({*study, out.pooled.back().get(), true});
    } else if (it->pooled_rounds) {
      append_round(*const_cast<LoadedScenario*>(it->scenario), s);
    }
  }
  return out;
}

std::vector<BarrierGap> barrier_gaps(const LoadedRun& run) {
  std::vector<BarrierGap> out;
  const AnswerScenarios scenarios = answer_scenarios(run);
  for (const AnswerScenario& entry : scenarios.entries) {
    const LoadedScenario& s = *entry.scenario;
    if (s.kind == ScenarioKind::preemption) continue;
    const std::optional<Clock> clock = answer_clock(s);
    if (!clock) continue;
    // A copy's timestamp ends with its own bytes, while what follows it on its queue may wait
    // longer (a copy on another queue still moving bytes): its poll end stamp is where its
    // consumer can start, so a copy's gaps are taken on the poll clock.
    std::set<std::string> copies;
    for (const RecordRow& r : s.records)
      if (r.kind == WorkloadKind::copy) copies.insert(r.workload);
    std::vector<MetricSeries> poll;
    if (!copies.empty() && *clock != Clock::poll) poll = metric_series(s, Clock::poll);
    for (const MetricSeries& m : metric_series(s, *clock)) {
      if (m.metric != "gap") continue;
      const auto on_poll =
          copies.count(m.producer) == 0
              ? poll.end()
              : std::find_if(poll.begin(), poll.end(), [&](const MetricSeries& p) {
                  return p.metric == "gap" && p.producer == m.producer && p.workload == m.workload;
                });
      const bool from_poll = on_poll != poll.end();
      const std::vector<double>& values = from_poll ? on_poll->values_us : m.values_us;
      if (!values.empty())
        out.push_back({entry.name, m.producer, m.workload, m.barrier,
                       from_poll ? Clock::poll : *clock, values});
    }
  }
  return out;
}

std::vector<BarrierTwin> barrier_twins(const LoadedRun& run) {
  constexpr std::string_view kLegacySuffix = "-legacy";
  std::vector<BarrierTwin> out;
  for (const LoadedScenario& twin : run.scenarios) {
    if (!is_top_level(run, twin)) continue;
    const std::string twin_name = relative_of(run, twin);
    if (twin_name.size() <= kLegacySuffix.size() || !twin_name.ends_with(kLegacySuffix)) continue;
    const std::string base = twin_name.substr(0, twin_name.size() - kLegacySuffix.size());
    const std::string twin_barrier = twin.meta.default_barrier.value_or("");
    for (const LoadedScenario& s : run.scenarios) {
      const std::string name = relative_of(run, s);
      if (&s == &twin || !is_top_level(run, s) || (name != base && !name.starts_with(base + "-")) ||
          name.ends_with(kLegacySuffix))
        continue;
      const std::string barrier = s.meta.default_barrier.value_or("");
      if (barrier.empty() || barrier == twin_barrier) continue;
      if (s.meta.work.is_null() || s.meta.work != twin.meta.work) continue;
      auto compare = [&](std::optional<Clock> clock, const std::vector<double>& spans,
                         const std::vector<double>& twin_spans) {
        const std::size_t least = clock ? kTwinMinClockFrames : 1;
        if (spans.size() < least || twin_spans.size() < least) return;
        const Interval difference = bootstrap_percentile_difference(twin_spans, spans, 50);
        out.push_back({name, twin_name, barrier, clock, spans.size(), twin_spans.size(),
                       *percentile(spans, 50), *percentile(twin_spans, 50), difference.low,
                       difference.high});
      };
      compare(std::nullopt, gpu_spans_us(s), gpu_spans_us(twin));
      for (const EnumName<Clock>& clock : kClockNames)
        compare(clock.value, clock_spans_us(s, clock.value), clock_spans_us(twin, clock.value));
    }
  }
  return out;
}

std::optional<Clock> answer_clock(const LoadedScenario& scenario) {
  bool poll = false;
  for (const RecordRow& r : scenario.records) {
    if (r.status != RecordStatus::ok) continue;
    if (r.ts_start_us && r.ts_end_us) return Clock::ts;
    poll = poll || (r.poll_start_us && r.poll_end_us);
  }
  return poll ? std::optional<Clock>(Clock::poll) : std::nullopt;
}

OverlapCount direct_compute_overlap(const LoadedScenario& scenario, Clock clock) {
  return count_overlap(scenario, clock, [](const Span& a, const Span& b) {
    return a.queue_type != b.queue_type;  // one DIRECT, one COMPUTE
  });
}

OverlapCount same_queue_overlap(const LoadedScenario& scenario, Clock clock) {
  return count_overlap(scenario, clock,
                       [](const Span& a, const Span& b) { return a.queue == b.queue; });
}

std::vector<StudyFile> read_studies(const LoadedRun& run) {
  std::vector<StudyFile> studies;
  for (const LoadedScenario& s : run.scenarios) {
    if (!s.study) continue;
    const std::string relative = relative_of(run, s);
    const std::string name = relative.substr(0, relative.find('/'));
    if (std::any_of(studies.begin(), studies.end(),
                    [&](const StudyFile& f) { return f.name == name; }))
      continue;
    StudyFile file;
    file.name = name;
    file.neighbours = s.study->kind == StudyKind::neighbours;
    const std::filesystem::path verdict_json = run.directory / name / "verdict.json";
    if (auto verdict = load_verdict_json(verdict_json)) {
      file.verdict = std::move(*verdict);
    } else if (std::error_code ec; std::filesystem::exists(verdict_json, ec)) {
      // The loader's message starts with the file's full path; the report names it relatively.
      const std::string prefix = verdict_json.string() + ": ";
      const std::string& message = verdict.error().message;
      file.verdict_error = message.starts_with(prefix) ? message.substr(prefix.size()) : message;
    }
    if (auto rows = load_verdict_csv(run.directory / name / "verdict.csv"))
      file.rows = std::move(*rows);
    else
      file.rows_error = rows.error().message;
    studies.push_back(std::move(file));
  }
  return studies;
}

std::string no_verdict_reason(const LoadedRun& run, const StudyFile& study) {
  if (!study.verdict_error.empty())
    return fmt::format("`{}/verdict.json` is unreadable: {}", study.name, study.verdict_error);
  return missing_verdict_reason(run, study.name);
}

ReportInputs read_report_inputs(const LoadedRun& run) {
  return {read_studies(run), preemption_cells(run)};
}

namespace {

// Only in a device's folder of `run --concurrency-rounds`.
void answer_neighbours(std::string& out, const LoadedRun& run,
                       const std::vector<StudyFile>& studies) {
  std::string answers;
  for (const StudyFile& study : studies)
    if (study.neighbours)
      answers += fmt::format("{}`{}`: {}", answers.empty() ? "" : " ", study.name,
                             neighbours_answer(run, study));
  if (answers.empty()) return;
  out +=
      "**6. Does the other devices' work disturb this one's?** This device with the run's "
      "other devices running the same scenario, against it alone. " +
      answers + "\n\n";
}

}  // namespace

std::string endpoint_effect(const VerdictRow& row, bool intervals) {
  auto interval = [&](const std::optional<double>& low, const std::optional<double>& high,
                      double scale, const char* format) {
    return intervals && low && high ? fmt::format(fmt::runtime(format), scale * *low, scale * *high)
                                    : std::string();
  };
  std::string effect;
  if (tests_median(row.tests) && row.ratio_p50)
    effect += fmt::format(" ×{:.3f}", *row.ratio_p50) +
              interval(row.ci_low, row.ci_high, 1, " [{:.3f}, {:.3f}]");
  if (tests_tail(row.tests) && row.tail_excess)
    effect +=
        fmt::format("{} tail {:+.1f} pts", effect.empty() ? "" : ",", 100.0 * *row.tail_excess) +
        interval(row.tail_ci_low, row.tail_ci_high, 100, " [{:+.1f}, {:+.1f}]");
  return effect;
}

std::string neighbours_answer(const LoadedRun& run, const StudyFile& study) {
  if (!study.verdict) return fmt::format("no verdict ({}).", no_verdict_reason(run, study));
  std::string decision = "?";
  for (const ConditionVerdict& c : study.verdict->verdict.conditions)
    if (c.condition == "together")
      decision = c.decision == Decision::intrusive       ? "**disturbed**"
                 : c.decision == Decision::non_intrusive ? "**not disturbed**"
                                                         : std::string(to_string(c.decision));
  std::string effects;
  if (!study.rows_error.empty()) {
    effects = fmt::format("`{}/verdict.csv`: {}", study.name, study.rows_error);
  } else {
    for (const VerdictRow& row : study.rows) {
      if (row.role != EndpointRole::primary) continue;
      const std::string effect = endpoint_effect(row, /*intervals=*/true);
      if (effect.empty()) continue;
      effects += (effects.empty() ? "" : "; ") + row.metric + effect;
    }
  }
  const std::string rounds =
      study.verdict->rounds ? fmt::format("{} rounds", study.verdict->rounds->run) : "";
  return fmt::format("{} ({}{}{}).", decision, effects,
                     effects.empty() || rounds.empty() ? "" : "; ", rounds);
}

std::string answers_section(const LoadedRun& run, const ReportInputs& inputs) {
  std::string out = "## Answers\n\n";
  const AnswerScenarios scenarios = answer_scenarios(run);
  answer_direct_compute(out, run, scenarios);
  answer_same_queue(out, run, scenarios);
  answer_barriers(out, run);
  answer_background(out, run, inputs.studies);
  answer_preemption(out, run, inputs.preemption);
  answer_neighbours(out, run, inputs.studies);
  return out;
}

}  // namespace gpuoverlap
