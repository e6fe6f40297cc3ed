#include "preemption/preemption_analysis.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "scenarios/scenario.h"
#include "timeline/statistics.h"

namespace gpuoverlap::preemption {

namespace {

std::optional<std::size_t> urgent_index(const Scenario& s) {
  for (std::size_t w = 0; w < s.workloads.size(); ++w)
    if (s.workloads[w].name == kUrgentWorkload) return w;
  return std::nullopt;
}

bool is_load(const Scenario& s, std::size_t w) {
  return s.workloads[w].name == kLoadWorkload || s.workloads[w].name == kLoadComputeWorkload;
}

std::uint32_t baseline_loads(const ScenarioTimeline& t) {
  return t.preemption ? t.preemption->baseline_loads : 0;
}

// The load submission running at `at_us` (started before, not yet ended), on one clock.
const LoadSpan* load_running_at(const std::vector<LoadSpan>& spans, double at_us) {
  for (const LoadSpan& span : spans)
    if (span.start_us && span.end_us && *span.start_us <= at_us && at_us < *span.end_us)
      return &span;
  return nullptr;
}

// An urgent job submitted while `load` ran "waited for it" when it started only at the load's
// end: within 200 us or 5 % of what remained of the load at submission.
bool waited_for(const LoadSpan& load, double submit_us, double start_us) {
  const double remaining_us = *load.end_us - submit_us;
  return start_us >= *load.end_us - std::max(200.0, 0.05 * remaining_us);
}

}  // namespace

std::vector<LoadSpan> load_spans(const Scenario& s, const ScenarioTimeline& t, Clock clock) {
  std::map<std::uint32_t, LoadSpan> spans;
  std::map<std::uint32_t, bool> complete;
  for (const WorkloadFrameRecord& r : t.records) {
    if (!is_load(s, r.workload)) continue;
    LoadSpan& span = spans[r.frame];
    span.submission = r.frame;
    span.baseline = r.frame < baseline_loads(t);
    auto [it, inserted] = complete.try_emplace(r.frame, true);
    const auto start = start_on(r, clock), end = end_on(r, clock);
    if (r.status != RecordStatus::ok || !start || !end) {
      it->second = false;
      continue;
    }
    const double start_us = r.frame_t0_us + *start, end_us = r.frame_t0_us + *end;
    span.start_us = span.start_us ? std::min(*span.start_us, start_us) : start_us;
    span.end_us = span.end_us ? std::max(*span.end_us, end_us) : end_us;
  }
  std::vector<LoadSpan> out;
  for (auto& [index, span] : spans) {
    if (!complete[index]) span.start_us = span.end_us = std::nullopt;
    out.push_back(span);
  }
  return out;
}

std::vector<UrgentRow> urgent_rows(const Scenario& s, const ScenarioTimeline& t) {
  std::vector<UrgentRow> rows;
  const auto urgent = urgent_index(s);
  if (!urgent || !s.preemption) return rows;
  const double period_us = s.preemption->period_ms * 1000.0;
  std::vector<LoadSpan> spans[3];
  for (int c = 0; c < 3; ++c) spans[c] = load_spans(s, t, kClocks[c]);
  std::map<std::uint32_t, const FrameRecord*> frames;
  for (const FrameRecord& f : t.frames) frames[f.frame] = &f;
  for (const WorkloadFrameRecord& r : t.records) {
    if (r.workload != *urgent) continue;
    UrgentRow row;
    row.submission = r.frame;
    row.submit_us = r.frame_t0_us;
    row.status = r.status;
    if (auto f = frames.find(r.frame); f != frames.end())
      row.submit_call_us = f->second->cpu_submit_us;
    for (int c = 0; c < 3; ++c) {
      if (auto v = start_on(r, kClocks[c])) row.start_us[c] = r.frame_t0_us + *v;
      if (auto v = end_on(r, kClocks[c])) row.end_us[c] = r.frame_t0_us + *v;
    }
    row.poll_disturbed = r.poll_disturbed;
    // A disturbed poll start says when the poller looked, not when the job started: the next
    // clock gives the latency where it has the start.
    const bool poll_late = disturbed_on(r.poll_disturbed, Clock::poll, kPollStartDisturbed);
    for (int c = poll_late && (row.start_us[1] || row.start_us[2]) ? 1 : 0; c < 3; ++c) {
      if (!row.start_us[c]) continue;
      row.latency_us = *row.start_us[c] - row.submit_us;
      row.latency_clock = kClocks[c];
      if (row.end_us[c]) row.completion_us = *row.end_us[c] - row.submit_us;
      if (const LoadSpan* load = load_running_at(spans[c], row.submit_us)) {
        row.load_running = true;
        row.load_remaining_us = *load->end_us - row.submit_us;
      }
      break;
    }
    row.deadline_met =
        row.status == RecordStatus::ok && row.completion_us && *row.completion_us <= period_us;
    rows.push_back(row);
  }
  return rows;
}

PreemptionClass classify(const std::optional<double>& p99_us, double period_ms) {
  if (!p99_us) return PreemptionClass::unmeasured;
  if (*p99_us < kPreemptsLatencyUs) return PreemptionClass::preempts;
  if (*p99_us < period_ms * 1000.0) return PreemptionClass::coarse;
  return PreemptionClass::blocked;
}

ClockSummary summarize_clock(const Scenario& s, const ScenarioTimeline& t, Clock clock) {
  ClockSummary out;
  out.clock = clock;
  const auto urgent = urgent_index(s);
  if (!urgent || !s.preemption) return out;
  const double period_us = s.preemption->period_ms * 1000.0;
  const std::vector<LoadSpan> spans = load_spans(s, t, clock);
  std::vector<double> latencies;
  std::size_t running = 0, waited = 0;
  for (const WorkloadFrameRecord& r : t.records) {
    if (r.workload != *urgent) continue;
    ++out.submissions;
    const auto start = start_on(r, clock), end = end_on(r, clock);
    if (r.status != RecordStatus::ok || !end || *end > period_us) ++out.deadline_misses;
    if (r.status != RecordStatus::ok || !start) continue;
    if (disturbed_on(r.poll_disturbed, clock, kPollStartDisturbed)) {
      ++out.disturbed;  // left out: when the poller looked, not when the job started
      continue;
    }
    latencies.push_back(*start);
    if (const LoadSpan* load = load_running_at(spans, r.frame_t0_us)) {
      ++running;
      if (waited_for(*load, r.frame_t0_us, r.frame_t0_us + *start)) ++waited;
    }
  }
  out.measured = latencies.size();
  out.latency_us[0] = percentile(latencies, 50);
  out.latency_us[1] = percentile(latencies, 95);
  out.latency_us[2] = percentile(latencies, 99);
  if (!latencies.empty()) out.latency_us[3] = *std::max_element(latencies.begin(), latencies.end());
  out.waited_for_load_pct = running ? 100.0 * static_cast<double>(waited) / running : 0.0;

  std::vector<double> alone, contended;
  for (const LoadSpan& span : spans)
    if (span.start_us && span.end_us)
      (span.baseline ? alone : contended).push_back((*span.end_us - *span.start_us) / 1000.0);
  out.load_baseline_ms = percentile(alone, 50);
  out.load_contended_ms = percentile(contended, 50);
  if (out.load_baseline_ms && out.load_contended_ms && *out.load_baseline_ms > 0)
    out.load_slowdown = *out.load_contended_ms / *out.load_baseline_ms;

  out.classification = classify(out.latency_us[2], s.preemption->period_ms);
  if (out.classification == PreemptionClass::unmeasured) {
    out.reason = out.disturbed > 0
                     ? "every urgent start on this clock was disturbed (the poller lost its CPU)"
                     : "no urgent submission has a start on this clock";
  } else {
    out.reason = fmt::format("p99 latency {:.1f} us {} ", *out.latency_us[2],
                             out.classification == PreemptionClass::preempts ? "<"
                             : out.classification == PreemptionClass::coarse ? ">= 100 us, <"
                                                                             : ">=");
    out.reason += out.classification == PreemptionClass::preempts
                      ? "100 us"
                      : fmt::format("the {:.1f} ms period", s.preemption->period_ms);
    if (running > 0)
      out.reason += fmt::format(
          "; {:.0f}% of the {} submissions made while the load ran waited "
          "for it to end",
          out.waited_for_load_pct, running);
  }
  if (out.disturbed > 0)
    out.reason += fmt::format(
        "; {} submission{} with a disturbed poll stamp left out (the poller lost its CPU)",
        out.disturbed, out.disturbed == 1 ? "" : "s");
  if (t.meta.value("compute_queue_shared", false))
    out.reason +=
        "; the COMPUTE queue shares the DIRECT queue's device queue here, so it "
        "cannot run beside the load";
  return out;
}

std::vector<SummaryRow> summary_rows(const Scenario& s, const ScenarioTimeline& t) {
  std::vector<SummaryRow> rows = summarize(s, t);
  const auto urgent = urgent_index(s);
  if (!urgent || !s.preemption) return rows;
  for (SummaryRow& row : rows) {
    if (row.workload != *urgent) continue;
    const ClockSummary c = summarize_clock(s, t, row.clock);
    SummaryRow::Preemption p;
    for (int i = 0; i < 4; ++i) p.latency_us[i] = c.latency_us[i];
    p.deadline_misses = c.deadline_misses;
    p.load_slowdown = c.load_slowdown;
    p.classification = name_of(kPreemptionClassNames, c.classification);
    row.preemption = p;
  }
  return rows;
}

std::string preemption_csv(const Scenario& s, const ScenarioTimeline& t) {
  std::string out = csv_line(kPreemptionColumns);
  if (!s.preemption) return out;
  const PreemptionSpec& spec = *s.preemption;
  const QueuePriority granted = t.preemption ? t.preemption->priority_granted : spec.priority;
  const ProcessMode process = t.preemption ? t.preemption->process : spec.process;
  for (const UrgentRow& r : urgent_rows(s, t))
    out +=
        fmt::format("{},{},{},{},{},{},{},{:.3f},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
                    csv_field(s.name), r.submission, to_string(spec.load), to_string(spec.priority),
                    to_string(granted), to_string(process), spec.period_ms, r.submit_us,
                    csv_number(r.submit_call_us), csv_number(r.start_us[0]),
                    csv_number(r.end_us[0]), csv_number(r.start_us[1]), csv_number(r.end_us[1]),
                    csv_number(r.start_us[2]), csv_number(r.end_us[2]),
                    csv_field(poll_disturbance_names(r.poll_disturbed)), csv_number(r.latency_us),
                    r.latency_clock ? to_string(*r.latency_clock) : std::string_view{},
                    csv_number(r.completion_us), r.deadline_met ? 1 : 0, r.load_running ? 1 : 0,
                    csv_number(r.load_remaining_us), to_string(r.status));
  return out;
}

std::string preemption_table(const std::vector<TableLine>& lines) {
  if (lines.empty()) return {};
  std::string out = fmt::format("\n{:<44} {:>5} {:>10} {:>10} {:>10} {:>10} {:>7} {:>8}  {}\n",
                                "preemption (latency, us)", "clock", "p50", "p95", "p99", "max",
                                "misses", "slowdown", "class");
  for (const TableLine& line : lines) {
    const ClockSummary& c = line.summary;
    auto cell = [](const std::optional<double>& v) {
      return v ? fmt::format("{:.1f}", *v) : std::string("-");
    };
    out += fmt::format("{:<44} {:>5} {:>10} {:>10} {:>10} {:>10} {:>7} {:>8}  {}\n", line.scenario,
                       to_string(c.clock), cell(c.latency_us[0]), cell(c.latency_us[1]),
                       cell(c.latency_us[2]), cell(c.latency_us[3]),
                       fmt::format("{}/{}", c.deadline_misses, c.submissions),
                       c.load_slowdown ? fmt::format("{:.2f}x", *c.load_slowdown) : "-",
                       name_of(kPreemptionClassNames, c.classification));
  }
  return out;
}

}  // namespace gpuoverlap::preemption
