// What a study measures of each frame: its endpoints (the pacing a player sees, or the frame's
// own ends; the components as diagnostics) and each usable frame's samples of them.
#include <string_view>

#include "analysis/verdict.h"
#include "timeline/records.h"

namespace gpuoverlap {

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

std::vector<std::pair<std::string, std::vector<double>>> verdict_metrics(
    const Scenario& s, const ScenarioTimeline& timeline, Clock gpu_clock,
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

}  // namespace gpuoverlap
