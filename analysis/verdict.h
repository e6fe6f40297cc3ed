// The non-intrusiveness verdict of a study (the rule is in docs/background.md, "The verdict"):
// every condition's per-frame metrics against the baseline's, and whether the positive control
// was detected (if it was not, the study had no power to see intrusion and no condition is
// called non-intrusive).
//
// The unit of evidence is the round, not the frame: the conditions run interleaved, so round r
// of a condition is compared with round r of the baseline (they ran minutes apart at most),
// and the interval comes from the spread of those per-round comparisons (Student's t over the
// rounds). Frames of one round share the machine's state (clocks, temperature, other load),
// so treating them as independent draws made intervals that drift between rounds never
// widened. A study of one round splits it into blocks of consecutive frames instead.
// API neutral: it reads the in-memory timelines the suite runner returns.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/decision.h"
#include "analysis/host_bursts.h"
#include "analysis/sched_account.h"
#include "analysis/time_account.h"
#include "core/enum_names.h"
#include "core/result.h"
#include "engine/suite_runner.h"
#include "timeline/results_format.h"

namespace gpuoverlap {

// The first release's columns first, then ours (append, never reorder). p99_ci_low,
// p99_ci_high and rank_p are retired (left empty): they judged frames as independent.
// role, tests, effect_us and effect_share: docs/background.md, "The verdict".
inline constexpr std::array<ColumnSpec, 31> kVerdictFile = {{{"condition", 0},
                                                             {"metric", 0},
                                                             {"baseline_p50", 0},
                                                             {"p50", 0},
                                                             {"ratio_p50", 0},
                                                             {"ci_low", 0},
                                                             {"ci_high", 0},
                                                             {"baseline_p99", 0},
                                                             {"p99", 0},
                                                             {"ratio_p99", 0},
                                                             {"verdict", 0},
                                                             {"p99_ci_low", 0},
                                                             {"p99_ci_high", 0},
                                                             {"rank_p", 0},
                                                             {"frames", 0},
                                                             {"baseline_frames", 0},
                                                             {"control", 0},
                                                             {"note", 0},
                                                             {"tail_rate", 1},
                                                             {"baseline_tail_rate", 1},
                                                             {"tail_excess", 1},
                                                             {"tail_ci_low", 1},
                                                             {"tail_ci_high", 1},
                                                             {"units", 1},
                                                             {"detectable_ratio", 1},
                                                             {"detectable_tail", 1},
                                                             {"pairing", 1},
                                                             {"role", 1},
                                                             {"tests", 1},
                                                             {"effect_us", 1},
                                                             {"effect_share", 1}}};
inline constexpr auto kVerdictColumns = column_names(kVerdictFile);

// What a verdict row is for: a primary endpoint decides, a diagnostic is reported with its
// effect and never decides alone (verdict.csv's `role`).
enum class EndpointRole { primary, diagnostic };
inline constexpr EnumNames<EndpointRole, 2> kEndpointRoleNames{
    {{EndpointRole::primary, "primary"}, {EndpointRole::diagnostic, "diagnostic"}}};

// What a row's decision rests on: the median's ratio, the tail's excess, or both
// (verdict.csv's `tests`).
enum class EndpointTests { median_and_tail, median, tail };
inline constexpr EnumNames<EndpointTests, 3> kEndpointTestsNames{
    {{EndpointTests::median_and_tail, "median+tail"},
     {EndpointTests::median, "median"},
     {EndpointTests::tail, "tail"}}};
constexpr bool tests_median(EndpointTests t) { return t != EndpointTests::tail; }
constexpr bool tests_tail(EndpointTests t) { return t != EndpointTests::median; }

// One metric of the verdict and what it is for. Primary endpoints are frame-level (what a
// player or a frame's deadline feels) and the only ones that decide; diagnostics are the
// components (submit time, poll gaps, workload durations), reported with their effect and
// never deciding alone. A primary endpoint is judged by its median, its tail, or both; the
// tail's threshold is the baseline's p99 of the other units, or fixed (the stutter line).
struct Endpoint {
  std::string metric;
  bool primary = false;
  bool median = true;
  bool tail = true;
  // Fixed: the late line and the stutter line of a paced frame's interval, 0.5 for a 0/1 flag.
  std::optional<double> tail_threshold_us;
  // What a frame beyond a fixed threshold is, for the row's note ("late", "a stutter").
  std::string beyond;
};

// A paced frame is late when its interval exceeds the period by more than this: the setting
// (VerdictSettings::late_tolerance_us) when given, else the larger of 5 % of the period and
// the baseline's p95 interval less the period (its own jitter, so that a host whose frames
// wander by 0.6 ms does not count each of them late), at most half a period (the stutter
// line). The p95 is each round's, and the median of those is taken: a host burst in one
// round does not move the line for all. `baseline_rounds_interval_us`: the baseline's frame
// intervals, per round.
double late_tolerance_us(double period_us,
                         const std::vector<std::vector<double>>& baseline_rounds_interval_us,
                         const std::optional<double>& setting_us);

// The endpoints of a study on this foreground, in verdict_metrics' order. A paced game frame
// ([cpu] with frame_period_ms) is judged on its pacing, what a player sees: the frame
// interval's median, the share of late frames (beyond the period by `late_tolerance_us`,
// default 5 % of it) and the share of stutters (beyond 1.5 periods); the CPU phase, the
// critical path, the wake-up and the GPU span are then diagnostics that say where the time
// went. Unpaced, the frame's CPU and GPU ends decide as before.
std::vector<Endpoint> verdict_endpoints(const Scenario& scenario,
                                        std::optional<double> late_tolerance_us = std::nullopt);

// Frame pacing of one condition over its usable frames (PresentMon's and CapFrameX's figures).
struct PacingSummary {
  std::size_t frames = 0;    // frames with an interval
  std::size_t late = 0;      // beyond the late line
  std::size_t stutters = 0;  // beyond 1.5 periods
  double interval_p50_us = 0;
  // Time-weighted 1 % low (CapFrameX's "integral" form): the frame rate at the interval where
  // the slowest frames, summed from the slowest down, reach 1 % of all the frames' time. A
  // run with one 100 ms hitch in 1000 frames of 8 ms shows it; the average of the slowest 1 %
  // of frames weighs that hitch like any other frame.
  double one_percent_low_fps = 0;
};
PacingSummary pacing_summary(const std::vector<double>& interval_us, double late_line_us,
                             double stutter_line_us);

struct VerdictSettings {
  // Per metric, over the units (rounds, or blocks of a one-round study):
  // - the median: the ratio of the condition's p50 to the baseline's in the same unit;
  // - the tail: the share of frames beyond the baseline's p99 in the *other* units by more than
  //   p50_margin and min_difference_us, the condition's minus the baseline's (not the same
  //   unit's p99: the baseline rarely exceeds its own, which biases the difference upward).
  //   3000 frames bound a rate of about 1 % well; they do not bound a p99.
  // Intrusive when the lower bound of either lies beyond its margin (the median also by more
  // than min_difference_us); non-intrusive when the upper bounds of both lie within (or the
  // median's difference stays under min_difference_us); otherwise inconclusive.
  double p50_margin = 0.05;
  double tail_margin = 0.01;  // in frames: 0.01 is one frame in 100 more than the baseline
  // The error rate of each call. Intrusion: any metric suffices, so each lower bound is at
  // 1 - alpha / K, K the condition's tests (2 per metric; Bonferroni). Non-intrusion needs every
  // metric, so each upper bound at 1 - alpha keeps the whole call at alpha (intersection-union).
  double alpha = 0.05;
  double min_difference_us = 1.0;
  // A paced frame's late line is the period plus this; none: from the baseline (above).
  std::optional<double> late_tolerance_us;
  std::size_t blocks = 6;           // units of a one-round study
  std::size_t min_units = 3;        // fewer usable units: inconclusive
  std::size_t min_unit_frames = 5;  // a unit with fewer frames on either side is not used
  std::size_t min_frames = 20;      // fewer usable frames over all units: inconclusive
  // Rounds in which the baseline (or the null control) had host bursts (host_bursts.h) may not
  // decide a condition alone: judge_study judges again without them, and a decision that does
  // not hold there becomes inconclusive. Off in that second judgement.
  bool guard_host_bursts = true;
};

struct VerdictRow {
  std::string condition, metric;
  double baseline_p50 = 0, p50 = 0, baseline_p99 = 0, p99 = 0;  // over all usable frames
  // ratio_p50: the geometric mean over units of the units' p50 ratios; ci_low is its lower
  // bound at 1 - alpha / K, ci_high its upper bound at 1 - alpha. ratio_p99 is descriptive.
  std::optional<double> ratio_p50, ci_low, ci_high, ratio_p99, p99_ci_low, p99_ci_high;
  std::optional<double> rank_p;  // retired
  // Shares of frames beyond the baseline's p99 of the other units (by the margins; means over
  // units), and the mean of the condition's share minus the baseline's, with its bounds
  // as for the median.
  std::optional<double> tail_rate, baseline_tail_rate, tail_excess, tail_ci_low, tail_ci_high;
  std::size_t frames = 0, baseline_frames = 0;
  std::size_t units = 0;  // rounds (or blocks) both sides had frames in
  // What a unit is: "round" (the condition's round against the baseline's), "block" (a study of
  // one round), or "alternating:<N>" (a pair of adjacent N-frame blocks of the condition's own
  // runs, one held and one running: BackgroundSpec::alternate_frames; the baseline columns
  // are then its held blocks).
  std::string pairing;
  // The smallest effects these units could have called intrusive (half the time): a median
  // ratio, and a tail excess, whose lower bound would just clear the margin at the spread seen.
  std::optional<double> detectable_ratio, detectable_tail;
  bool control = false;
  bool null_control = false;  // a row of the null control (verdict.json names it; not a CSV column)
  bool negative_control = false;  // a row of the negative control (likewise)
  // A primary endpoint's call (non-intrusive, intrusive, inconclusive, no power); a
  // diagnostic's says how it moved (worse, within, unclear). verdict.csv's `verdict` column.
  Decision decision = Decision::inconclusive;
  std::string note;
  EndpointRole role = EndpointRole::primary;
  EndpointTests tests = EndpointTests::median_and_tail;
  // The median's change, (ratio_p50 - 1) * baseline_p50, and that as a share of the frame's
  // period (the pace, or the baseline's median frame interval when unpaced).
  std::optional<double> effect_us, effect_share;
};

// The other half of the promise: how much background work a condition got done.
struct BackgroundProgress {
  std::string condition;
  std::uint32_t control_threads = 0;
  std::size_t compiles = 0;  // completed (delivered, compiled or dropped after compiling)
  double seconds = 0;        // the measured frames' wall time over its runs
  double compiles_per_s = 0;
  std::optional<double> queue_to_done_p50_ms, queue_to_done_p99_ms;
  // What those compiles cost the threads that ran them (background.csv's thread columns; empty
  // where unknown: Windows, files without them): CPU time per compile, the kernel's share of it
  // (system calls, page faults: work a kernel without full preemption finishes before the CPU
  // goes to a woken frame loop), page faults and run delay per compile.
  std::optional<double> on_cpu_ms_per_compile, kernel_share, minor_faults_per_compile,
      run_delay_ms_per_compile;
  // Waiting on the background ([background] commit_at_frame): per round whose event came, the
  // time from the request to it, in round order; and the rounds whose event did not come
  // within commit_timeout_ms.
  std::vector<double> commit_to_event_ms;
  std::size_t commits_not_signalled = 0;
  // Rounds whose frames ended before commit_at_frame: asked with every CPU free, so their time
  // is not under the game's load.
  std::size_t commits_asked_at_end = 0;
};

// "a commit waited for: 412 ms median over 3 rounds (max 530), 1 of them asked after the
// frames"; "" without commit waits.
std::string describe_commit_waits(const BackgroundProgress& progress);

// "compile threads: 1.9 ms CPU per compile, 41 % of it in the kernel, 5,120 page faults per
// compile"; empty when the progress has no thread figures.
std::string describe_compile_cost(const BackgroundProgress& progress);

struct ConditionVerdict;
// "its 4 rounds could resolve a median x1.041 or a tail of +2.3 points (half the time)": what an
// inconclusive call could have seen; "" when its rows had no spread to judge.
std::string describe_resolvable(const ConditionVerdict& cv);

struct ConditionVerdict {
  std::string condition;
  bool control = false;
  // The null control (an A/A test: the baseline's settings run as a condition of their own,
  // `control = "null"`): every call on it is a false one, so an intrusive null says the rounds
  // differ by more than the error control allows on this host.
  bool null_control = false;
  // The negative control (`control = "idle-spinners"`, background/idle_spinners.h): idle-
  // priority threads on every foreground CPU doing a compiler's memory traffic. A neutral
  // harness leaves them only idle CPUs, so an intrusive call on it is the harness's fault.
  bool negative_control = false;
  // Idle-priority spinners and no compiles (`idle_spinners = true` in its [condition.background],
  // or the negative control): every frame is evidence, and no compiles done is not starving.
  // Outside the negative control, a condition of their own: where the game's own frame loop
  // yields, they take its CPU by the kernel's rule, which says nothing of the harness.
  bool spinners = false;
  // Over its primary endpoints: intrusive if any is, non-intrusive if all are.
  Decision decision = Decision::inconclusive;
  std::size_t frames = 0;             // measured frames
  std::size_t active_frames = 0;      // of them, frames its background work overlapped
  std::uint32_t control_threads = 0;  // a positive control's normal-priority compile threads
  std::string pairing;                // VerdictRow::pairing
  BackgroundProgress progress;
  bool starved = false;  // non-intrusive, but it got (almost) none of its work done
  // How its compile threads were scheduled (background::describe of its policy, CPUs, memory,
  // cgroup and dispatch; "" for the baseline, a null or a positive control), and whether that is
  // the spec's runtime (idle priority, anywhere, the system allocator, started at any time).
  std::string scheduling;
  bool spec_scheduling = false;
  std::optional<PacingSummary> pacing;  // a paced frame's, over its evidence frames
  // Where its frame time went against the baseline (analysis/time_account.h); empty for
  // frames without the frame loop's phases.
  std::optional<TimeAccount> time_account;
  // What the kernel's record says of its frame loop (run --sched-trace); none without it.
  std::optional<SchedAccount> sched;
  HostBursts bursts;  // its frames past the burst line, and what the thread accounting says
  // Why a decision was withdrawn: the rounds with the host's bursts decided it alone (empty
  // when none was).
  std::string burst_note;
  // What its rounds could have resolved: the smallest median ratio and tail excess that would
  // have been called intrusive half the time at the spread seen, the worst over its primary
  // rows (VerdictRow::detectable_*), and the most units they had. What an inconclusive call
  // means: an effect below these may be there.
  std::optional<double> resolvable_ratio, resolvable_tail;
  std::size_t units = 0;
};

// One dose of the positive control: its threads, its verdict and its strongest effect (the
// intrusive row whose lower bound lies furthest beyond its margin; none when not intrusive).
struct ControlDose {
  std::string condition;
  std::uint32_t threads = 0;
  Decision decision = Decision::inconclusive;
  std::string metric;
  std::optional<double> ratio_p50, tail_excess;
};

// Whether a study is done adding rounds, and why.
struct StudyProgress {
  // Inconclusive primary rows of undecided conditions other than the control (a condition
  // intrusive on one endpoint is decided).
  std::size_t undecided = 0;
  bool decided = false;  // none
  // Doses of the positive control still undecided below the smallest one detected (all of
  // them while none is): more rounds may lower the smallest dose the study can see, so they
  // take rounds, within the budget, after every other condition is decided.
  std::size_t control_pending = 0;
  std::uint32_t rounds = 0;  // rounds run
  double seconds = 0;        // its scenarios' wall time
  // The last round's wall time of the conditions another round would repeat (the baseline and
  // the undecided ones): the cost of one more round, which must fit in the budget.
  double last_round_seconds = 0;
  std::string stop;  // empty while another round may run: why no more will ("decided", ...)
};

struct StudyVerdict {
  std::string study;
  std::string baseline;
  std::uint32_t rounds = 1;  // rounds run
  std::string unit;          // "round", or "block" for a study of one round
  std::size_t tests = 0;     // K: the intrusion tests of one condition (its primary endpoints')
  Clock gpu_clock = Clock::poll;  // the clock of the gpu_duration metrics: ts or poll
  std::vector<VerdictRow> rows;
  std::vector<ConditionVerdict> conditions;  // baseline excluded
  // Conditions this host could not give what they ask (Scenario::study_not_run): never run
  // under another setting, each with why.
  std::vector<std::pair<std::string, std::string>> not_run;
  bool has_control = false;
  bool control_detected = false;
  // The controls by threads, fewest first: the smallest dose detected, and what it did, is the
  // smallest intrusion this study has shown it can see.
  std::vector<ControlDose> doses;
  std::optional<std::uint32_t> detected_from_threads;
  // The dose that must intrude (must_intrude_dose): one normal-priority thread per CPU the
  // frame uses, where half of each CPU leaves the workers too little for the period; none when
  // the frame is unpaced or leaves that much slack. Detected when a dose of at least this many
  // threads was called intrusive; a study that misses it cannot see even certain intrusion.
  std::optional<std::uint32_t> must_intrude_threads;
  std::string must_intrude_why;
  bool must_intrude_detected = false;
  std::string summary;              // one line per condition, for the terminal and verdict.json
  std::optional<double> period_us;  // the frame's period the effects are shares of
  // A paced frame: the lines its late frames and stutters are counted beyond, and the
  // baseline's pacing.
  std::optional<double> late_line_us, stutter_line_us;
  std::optional<PacingSummary> baseline_pacing;
  std::optional<SchedAccount> baseline_sched;  // the kernel's record of the baseline's rounds
  bool has_null = false;
  bool null_false_alarm = false;  // the null control was called intrusive
  bool has_negative = false;
  // The negative control was called intrusive: the measurement itself disturbs the frame, and
  // no call of this study can be trusted (selftest's neutrality row fails the same way).
  bool harness_fault = false;
  // Host bursts (host_bursts.h): the line, from the baseline's CPU phase (none without [cpu]),
  // and the baseline's own; each condition has its own in ConditionVerdict::bursts.
  std::optional<BurstReference> burst_reference;
  HostBursts baseline_bursts;
  // The baseline's median CPU phase against the work asked of each worker ([cpu]
  // cpu_ms_per_frame / workers, in busy-work milliseconds): well below 1 the frame did less
  // work than asked, because the busy-work calibration ran slower than the frames did (a busy
  // hyper-thread sibling or a low clock while it ran; measured once on the H100 machine: 2.4 ms
  // against the 5 ms asked, where other processes gave 5.2-5.6), and the study then measured a
  // lighter game than its file says. Empty without [cpu].
  std::optional<double> cpu_phase_of_asked;
};
// Below this share the summary says the frame did less work than asked.
inline constexpr double kLessWorkThanAsked = 0.75;

// The positive control's dose that must intrude on `foreground`, and why: a paced frame whose
// workers need cpu_ms_per_worker each per period, where twice that exceeds the period, is late
// in every frame when each of its CPUs (the workers' and the poller's: workers + 1) also runs a
// normal-priority thread that never sleeps, since the kernel's fair share gives each half.
// Unpaced frames, and frames with that much slack, have no such dose (none).
struct MustIntrudeDose {
  std::uint32_t threads = 0;
  std::string why;
};
std::optional<MustIntrudeDose> must_intrude_dose(const Scenario& foreground);
// Whether the study ran a dose of at least `must_intrude_threads` threads (else its
// must_intrude_detected says nothing).
bool must_intrude_reached(const StudyVerdict& verdict);

// Per-frame samples of one condition, by metric name, in verdict_endpoints' order: the frame-level
// endpoints (cpu_phase_us, critical_path_us and wake_max_us with [cpu], else cpu_frame_us;
// frame_interval_us, gpu_span_us), then the diagnostics (cpu_frame_us with [cpu],
// cpu_submit_us, submit_to_start_us, poll_gap_max_us, gpu_duration_us:<workload> on
// `gpu_clock`). Only ok frames that `use` accepts.
std::vector<std::pair<std::string, std::vector<double>>> verdict_metrics(
    const Scenario& scenario, const ScenarioTimeline& timeline, Clock gpu_clock,
    const std::function<bool(const FrameRecord&)>& use);

// The study's verdict. Contract: `outcomes` are the scenarios of one study (every round of
// every condition), each measured; exactly one condition has no background (the baseline).
// Rounds are paired by Scenario::round; a condition's round without a baseline round of the
// same number is not used.
Result<StudyVerdict> judge_study(const std::vector<const ScenarioOutcome*>& outcomes,
                                 const VerdictSettings& settings);

// Where a study stands after `verdict` (of `outcomes`, its scenarios so far).
StudyProgress study_progress(const std::vector<const ScenarioOutcome*>& outcomes,
                             const StudyVerdict& verdict);

// The next round of every study in `outcome` that is undecided and may run another round
// (Scenario::study_budget_s, study_max_rounds; the next round is assumed to take as long as
// the last); `log` says which and why. For run_suite's MoreScenarios.
std::vector<Scenario> next_study_rounds(const SuiteOutcome& outcome,
                                        const VerdictSettings& settings, std::ostream& log);

// For every study in the outcome: judge it and write OUT/<study>/verdict.csv and
// verdict.json; the summary goes to `log`. A study whose conditions did not all complete is
// reported and skipped.
Status write_study_verdicts(const SuiteOutcome& outcome, const std::filesystem::path& out,
                            const VerdictSettings& settings, std::ostream& log);

}  // namespace gpuoverlap
