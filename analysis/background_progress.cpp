// The other half of the promise: how much background work each condition got done (compiles,
// their rate and latency, what they cost their threads, the commits waited for), and in words.
#include <fmt/format.h>

#include <algorithm>

#include "analysis/verdict_internal.h"
#include "timeline/statistics.h"

namespace gpuoverlap {

namespace verdict_internal {

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

const BackgroundProgress* control_rate_of(const std::vector<ConditionVerdict>& conditions) {
  const BackgroundProgress* rate = nullptr;
  for (const ConditionVerdict& cv : conditions)
    if (cv.control && (!rate || cv.control_threads < rate->control_threads)) rate = &cv.progress;
  return rate;
}

}  // namespace verdict_internal

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

}  // namespace gpuoverlap
