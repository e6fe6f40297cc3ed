// From a preemption scenario's timeline to its answer: per urgent submission the latency from
// the CPU's submit to the job's first thread, completion against the period, and the load it
// had to get past; per configuration the latency percentiles, deadline misses, the load's
// slowdown and a classification. No GPU API.
//
// Times in a preemption timeline: each record's frame_t0_us is its submission's CPU time
// (just before vkQueueSubmit2), so a record's start on any clock is already the latency.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/enum_names.h"
#include "timeline/export.h"
#include "timeline/records.h"

namespace gpuoverlap {

struct Scenario;

namespace preemption {

// `poll_disturbed`: records.csv's, for the urgent job's poll stamps.
inline constexpr std::array<std::string_view, 23> kPreemptionColumns = {
    "scenario",       "submission",        "load",          "priority",       "priority_granted",
    "process",        "period_ms",         "submit_us",     "submit_call_us", "poll_start_us",
    "poll_end_us",    "ts_start_us",       "ts_end_us",     "clk_start_us",   "clk_end_us",
    "poll_disturbed", "latency_us",        "latency_clock", "completion_us",  "deadline_met",
    "load_running",   "load_remaining_us", "status"};

// One urgent submission. Times are µs from the run's time origin (the first urgent submit).
struct UrgentRow {
  std::uint32_t submission = 0;
  double submit_us = 0;
  std::optional<double> submit_call_us;          // how long vkQueueSubmit2 took
  std::optional<double> start_us[3], end_us[3];  // poll, ts, clk
  std::uint32_t poll_disturbed = 0;  // PollDisturbance bits of the urgent job's poll stamps
  // Start minus submit on latency_clock: poll when it has an undisturbed start, else ts, else
  // clk, else the disturbed poll start.
  std::optional<double> latency_us;
  std::optional<Clock> latency_clock;
  std::optional<double> completion_us;  // end minus submit, same clock
  bool deadline_met = false;            // completed within one period of its submit
  // A load submission was running (started, not ended, same clock family) at the submit;
  // then how long it still had to run.
  bool load_running = false;
  std::optional<double> load_remaining_us;
  RecordStatus status = RecordStatus::ok;
};

// The load's submissions, spanning all its parts.
struct LoadSpan {
  std::uint32_t submission = 0;
  std::optional<double> start_us, end_us;  // from the time origin, on the clock asked for
  bool baseline = false;                   // ran alone, before the urgent job
};

std::vector<LoadSpan> load_spans(const Scenario& s, const ScenarioTimeline& t, Clock clock);
std::vector<UrgentRow> urgent_rows(const Scenario& s, const ScenarioTimeline& t);

// How the urgent job got the GPU: preempts (p99 latency under 100 µs, kPreemptsLatencyUs),
// coarse (under the period), blocked (longer), or unmeasured (no latency on the clock).
// summary.csv's `preemption` column.
enum class PreemptionClass { preempts, coarse, blocked, unmeasured };
inline constexpr EnumNames<PreemptionClass, 4> kPreemptionClassNames{
    {{PreemptionClass::preempts, "preempts"},
     {PreemptionClass::coarse, "coarse"},
     {PreemptionClass::blocked, "blocked"},
     {PreemptionClass::unmeasured, "unmeasured"}}};

// Latency statistics of one clock over the measured rows.
struct ClockSummary {
  Clock clock = Clock::poll;
  std::size_t submissions = 0;          // urgent submissions made
  std::size_t measured = 0;             // with a latency on this clock
  std::size_t disturbed = 0;            // poll clock: left out, their start stamp disturbed
  std::optional<double> latency_us[4];  // p50, p95, p99, max
  std::size_t deadline_misses = 0;      // completed later than one period, or never
  std::optional<double> load_baseline_ms, load_contended_ms;  // medians
  std::optional<double> load_slowdown;                        // contended / baseline
  double waited_for_load_pct = 0;  // of the rows with a load running at the submit
  PreemptionClass classification = PreemptionClass::unmeasured;
  std::string reason;              // one line: why this class
};

// preempts: p99 latency < 100 µs (kPreemptsLatencyUs); coarse: p99 < period; blocked: longer.
PreemptionClass classify(const std::optional<double>& p99_us, double period_ms);

ClockSummary summarize_clock(const Scenario& s, const ScenarioTimeline& t, Clock clock);

// summary.csv rows of a preemption scenario: the usual per-workload rows, with the urgent
// workload's latency columns filled per clock.
std::vector<SummaryRow> summary_rows(const Scenario& s, const ScenarioTimeline& t);

std::string preemption_csv(const Scenario& s, const ScenarioTimeline& t);

// The end-of-run table, one line per preemption scenario (poll clock, else ts).
struct TableLine {
  std::string scenario;
  ClockSummary summary;
};
std::string preemption_table(const std::vector<TableLine>& lines);

}  // namespace preemption
}  // namespace gpuoverlap
