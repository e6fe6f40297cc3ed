#include "analysis/time_account.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>

#include "analysis/student_t.h"

namespace gpuoverlap {

namespace {

// The figures of one frame that are accounted, in PhaseShift order: the interval, the six
// phases, the run delay.
constexpr std::size_t kFigures = 8;
constexpr std::array<const char*, kFigures> kFigureNames = {
    "interval", "jobs", "submit", "tool", "gpu_wait", "pace", "woke_late", "run_delay"};

std::array<std::optional<double>, kFigures> figures_of(const FrameRecord& f) {
  return {f.frame_interval_us, f.loop_jobs_us, f.loop_submit_us,    f.loop_tool_us,
          f.loop_gpu_wait_us,  f.loop_pace_us, f.loop_woke_late_us, f.loop_run_delay_us};
}

// A frame that is accounted: ok, with its interval and the six phases.
bool accounted(const FrameRecord& f) {
  if (f.status != RecordStatus::ok) return false;
  const auto figures = figures_of(f);
  return std::all_of(figures.begin(), figures.end() - 1,
                     [](const auto& v) { return v.has_value(); });
}

// Per figure, the sum and count over the frames `use` accepts.
struct Sums {
  std::array<double, kFigures> sum_us{};
  std::array<std::size_t, kFigures> count{};
  void add(const FrameRecord& f) {
    const auto figures = figures_of(f);
    for (std::size_t i = 0; i < kFigures; ++i)
      if (figures[i]) {
        sum_us[i] += *figures[i];
        ++count[i];
      }
  }
  std::optional<double> mean_us(std::size_t i) const {
    if (count[i] == 0) return std::nullopt;
    return sum_us[i] / static_cast<double>(count[i]);
  }
};

Sums sums_of(const std::vector<const ScenarioOutcome*>& rounds,
             const std::function<bool(const FrameRecord&)>& use) {
  Sums s;
  for (const ScenarioOutcome* r : rounds)
    if (r->timeline)
      for (const FrameRecord& f : r->timeline->frames)
        if (accounted(f) && use(f)) s.add(f);
  return s;
}

std::string signed_ms(double us) { return fmt::format("{:+.2f} ms", us / 1000.0); }

// Whether a compile whose thread's CPU is known ran in frame `f`'s interval (from the frame
// before's start to this one's), and whether one of them started or ended on the CPU the frame
// loop started `f` on. Contract: f.loop_cpu is known.
void count_cpu_sharing(const ScenarioTimeline& t, const FrameRecord& f, TimeAccount& a) {
  const std::int64_t end_ns = t.time_origin_ns + static_cast<std::int64_t>(f.cpu_start_us * 1e3);
  const std::int64_t begin_ns = end_ns - static_cast<std::int64_t>(*f.frame_interval_us * 1e3);
  bool compiling = false, shared = false;
  for (const background::BackgroundTaskRecord& task : t.background_tasks) {
    if (task.start_ns == 0 || task.thread.cpu_start < 0) continue;
    if (task.start_ns >= end_ns || (task.finish_ns != 0 && task.finish_ns <= begin_ns)) continue;
    compiling = true;
    shared = shared || task.thread.cpu_start == *f.loop_cpu || task.thread.cpu_end == *f.loop_cpu;
  }
  if (!compiling) return;
  ++a.intervals_with_compiles;
  if (shared) ++a.intervals_sharing_cpu;
}

}  // namespace

std::string phase_label(const std::string& phase) {
  if (phase == "jobs") return "waiting for its CPU jobs";
  if (phase == "submit") return "recording and submitting";
  if (phase == "tool") return "the tool's own work";
  if (phase == "gpu_wait") return "waiting for the GPU";
  if (phase == "pace") return "the pacing sleep";
  if (phase == "woke_late") return "waking late after the pacing sleep";
  if (phase == "run_delay") return "runnable but not running";
  return phase;
}

std::optional<TimeAccount> account_time(const std::vector<const ScenarioOutcome*>& baseline_rounds,
                                        const std::vector<const ScenarioOutcome*>& rounds,
                                        bool (*use)(const FrameRecord&),
                                        std::optional<double> late_line_us) {
  auto every = [](const FrameRecord&) { return true; };
  const Sums baseline = sums_of(baseline_rounds, every);
  const Sums condition = sums_of(rounds, use);
  if (baseline.count[0] == 0 || condition.count[0] == 0) return std::nullopt;
  // Per round pair, each figure's shift of means: the spread the interval comes from.
  std::array<std::vector<double>, kFigures> pair_shifts;
  for (const ScenarioOutcome* c : rounds) {
    const auto b = std::find_if(
        baseline_rounds.begin(), baseline_rounds.end(),
        [&](const ScenarioOutcome* o) { return o->scenario.round == c->scenario.round; });
    if (b == baseline_rounds.end()) continue;
    const Sums bs = sums_of({*b}, every), cs = sums_of({c}, use);
    for (std::size_t i = 0; i < kFigures; ++i) {
      const auto bm = bs.mean_us(i), cm = cs.mean_us(i);
      if (bm && cm) pair_shifts[i].push_back(*cm - *bm);
    }
  }
  auto shift_of = [&](std::size_t i) -> std::optional<PhaseShift> {
    const auto bm = baseline.mean_us(i), cm = condition.mean_us(i);
    if (!bm || !cm) return std::nullopt;
    PhaseShift p;
    p.phase = kFigureNames[i];
    p.baseline_mean_us = *bm;
    p.condition_mean_us = *cm;
    p.shift_us = *cm - *bm;
    const std::vector<double>& d = pair_shifts[i];
    if (d.size() >= 2) {
      double mean = 0;
      for (double v : d) mean += v;
      mean /= static_cast<double>(d.size());
      double variance = 0;
      for (double v : d) variance += (v - mean) * (v - mean);
      variance /= static_cast<double>(d.size() - 1);
      const double df = static_cast<double>(d.size() - 1);
      const double half =
          student_t_quantile_upper(0.025, df) * std::sqrt(variance / static_cast<double>(d.size()));
      p.low_us = mean - half;
      p.high_us = mean + half;
    }
    return p;
  };
  TimeAccount a;
  a.interval = *shift_of(0);
  for (std::size_t i = 1; i + 1 < kFigures; ++i) a.phases.push_back(*shift_of(i));
  a.run_delay = shift_of(kFigures - 1);
  for (const ScenarioOutcome* r : rounds)
    if (r->timeline)
      for (const FrameRecord& f : r->timeline->frames) {
        if (!accounted(f) || !use(f)) continue;
        ++a.frames;
        if (late_line_us && *f.frame_interval_us > *late_line_us) {
          ++a.late_frames;
          if (background_overlapped(f)) ++a.late_overlapping_background;
        }
        if (f.loop_cpu) count_cpu_sharing(*r->timeline, f, a);
        if (f.workers_on_loop_cpu) {
          ++a.frames_with_worker_cpus;
          if (*f.workers_on_loop_cpu > 0) ++a.frames_worker_on_loop_cpu;
        }
      }
  for (const ScenarioOutcome* r : baseline_rounds)
    if (r->timeline)
      for (const FrameRecord& f : r->timeline->frames)
        if (accounted(f) && f.workers_on_loop_cpu) {
          ++a.baseline_frames_with_worker_cpus;
          if (*f.workers_on_loop_cpu > 0) ++a.baseline_frames_worker_on_loop_cpu;
        }
  a.line = describe_time_account(a);
  return a;
}

std::string describe_time_account(const TimeAccount& a) {
  std::string line = fmt::format("frame interval {} (mean)", signed_ms(a.interval.shift_us));
  // The phase that moved most in the interval's direction: where the time went (or came from).
  const double sign = a.interval.shift_us >= 0 ? 1.0 : -1.0;
  const auto most = std::max_element(a.phases.begin(), a.phases.end(),
                                     [&](const PhaseShift& x, const PhaseShift& y) {
                                       return sign * x.shift_us < sign * y.shift_us;
                                     });
  // When the frame loop's wait for a CPU makes up half the change or more, that is the cause,
  // whichever phase it fell in: a phase that grew only because the thread was not running
  // (the tool's few microseconds of work after the GPU wait, say) is where, not why.
  const bool waited_for_cpu = a.run_delay && sign * a.interval.shift_us > 0 &&
                              sign * a.run_delay->shift_us >= 0.5 * sign * a.interval.shift_us;
  if (waited_for_cpu)
    line += fmt::format(": the frame loop waited {} for a CPU (runnable but not running)",
                        signed_ms(a.run_delay->shift_us));
  if (most != a.phases.end()) {
    line +=
        fmt::format("{} {}, {}", waited_for_cpu ? "; the phase that grew most:" : ": most of it",
                    phase_label(most->phase), signed_ms(most->shift_us));
    if (most->low_us && most->high_us)
      line += fmt::format(" [{:.2f}, {:.2f}]", *most->low_us / 1000.0, *most->high_us / 1000.0);
  }
  if (a.run_delay && !waited_for_cpu)
    line += fmt::format("; runnable but not running {}", signed_ms(a.run_delay->shift_us));
  if (a.late_frames > 0)
    line += fmt::format("; {:.0f} % of late frames ({} of {}) overlapped a background task",
                        100.0 * static_cast<double>(a.late_overlapping_background) /
                            static_cast<double>(a.late_frames),
                        a.late_overlapping_background, a.late_frames);
  if (a.intervals_with_compiles > 0)
    line +=
        fmt::format("; in {} of {} intervals the frame loop ran on a CPU a compile thread ran on",
                    a.intervals_sharing_cpu, a.intervals_with_compiles);
  if (a.frames_with_worker_cpus > 0 && a.baseline_frames_with_worker_cpus > 0)
    line += fmt::format(
        "; a worker ran on the frame loop's CPU in {:.0f} % of frames (baseline {:.0f} %)",
        100.0 * static_cast<double>(a.frames_worker_on_loop_cpu) /
            static_cast<double>(a.frames_with_worker_cpus),
        100.0 * static_cast<double>(a.baseline_frames_worker_on_loop_cpu) /
            static_cast<double>(a.baseline_frames_with_worker_cpus));
  return line;
}

}  // namespace gpuoverlap
