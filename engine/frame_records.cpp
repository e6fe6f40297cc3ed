#include "engine/frame_records.h"

#include <algorithm>
#include <span>

#include "engine/device_clocks.h"
#include "timeline/clock_conversion.h"

namespace gpuoverlap {
namespace {

RecordStatus status_for(GpuStatus status) {
  if (status == GpuStatus::timeout) return RecordStatus::timeout;
  if (status == GpuStatus::device_lost) return RecordStatus::device_lost;
  return RecordStatus::gpu_error;
}

// The shader clock of a stamp, when the stamp is this frame's: the clock words are written
// before the stamp they belong to, so only then are they this frame's too.
std::optional<std::uint64_t> shader_clock_ticks(const std::uint32_t* slot, std::size_t stamp_word,
                                                std::size_t clock_word, std::uint32_t frame) {
  if (__atomic_load_n(slot + stamp_word, __ATOMIC_ACQUIRE) != frame) return std::nullopt;
  return std::uint64_t{__atomic_load_n(slot + clock_word, __ATOMIC_RELAXED)} |
         std::uint64_t{__atomic_load_n(slot + clock_word + 1, __ATOMIC_RELAXED)} << 32;
}

// The frame's span on the GPU: its first workload's start to its last one's end, on the
// timestamps, else on the poll clock. The GPU's own clock first: with every core busy the
// poller can be descheduled and see a whole frame's stamps at once (a span of 0 on the H100
// machine with spinning workers and a competitor).
std::optional<double> gpu_span_us(std::span<const WorkloadFrameRecord> records) {
  for (const Clock clock : {Clock::ts, Clock::poll}) {
    std::optional<double> first, last;
    bool complete = true;
    for (const WorkloadFrameRecord& r : records) {
      const auto start = start_on(r, clock), end = end_on(r, clock);
      if (!start || !end) {
        complete = false;
        break;
      }
      first = first ? std::min(*first, *start) : *start;
      last = last ? std::max(*last, *end) : *end;
    }
    if (complete && first && last) return *last - *first;
  }
  return std::nullopt;
}

// The frame's own record, but for what its workloads' records add (submit_to_start_us, status,
// gpu_span_us): its CPU side, the loop's interval, the poller.
FrameRecord frame_record_of(const LoopFrame& f, const RecordReading& how) {
  FrameRecord frame_record;
  frame_record.frame = f.measured_frame;
  frame_record.cpu_start_us = ns_to_us_since(f.frame_start_ns, how.origin_ns);
  // The application's part only: the CPU phase ([cpu]), recording and submitting, then
  // releasing and waiting. The tool's own work between and after (the calibration read,
  // starting the poller thread, collecting its stamps) would put the tool's threads into
  // the metric.
  frame_record.cpu_frame_us =
      ns_to_us_since(f.cpu_submitted_ns, f.frame_start_ns) + ns_to_us_since(f.waited_ns, f.t0_ns);
  frame_record.frame_interval_us = f.frame_interval_us;
  if (f.frame_interval_us && how.period_ns > 0 &&
      *f.frame_interval_us * 1e3 > 1.5 * static_cast<double>(how.period_ns))
    frame_record.stutter = true;
  if (const std::optional<jobs::FrameJobsResult>& cpu_phase = f.cpu_phase) {
    frame_record.cpu_phase_us = cpu_phase->makespan_us();
    frame_record.critical_path_us = cpu_phase->critical_path_us();
    frame_record.wake_max_us = cpu_phase->wake_max_us();
    frame_record.workers_missed = cpu_phase->missed_workers;
    const auto [least, most] =
        std::minmax_element(cpu_phase->busy_us.begin(), cpu_phase->busy_us.end());
    frame_record.worker_busy_min_us = *least;
    frame_record.worker_busy_max_us = *most;
  }
  if (f.frame_interval_us && f.phases_of_interval) {
    auto us = [&](LoopPhase p) { return static_cast<double>(f.phases_of_interval->at(p)) / 1e3; };
    frame_record.loop_jobs_us = us(LoopPhase::jobs);
    frame_record.loop_submit_us = us(LoopPhase::submit);
    frame_record.loop_tool_us = us(LoopPhase::tool);
    frame_record.loop_gpu_wait_us = us(LoopPhase::gpu_wait);
    frame_record.loop_pace_us = us(LoopPhase::pace);
    frame_record.loop_woke_late_us = us(LoopPhase::woke_late);
  }
  if (f.frame_interval_us && f.accounting_of_interval) {
    const ThreadAccounting& a = *f.accounting_of_interval;
    if (a.run_delay_ns) frame_record.loop_run_delay_us = static_cast<double>(*a.run_delay_ns) / 1e3;
    if (a.on_cpu_ns) frame_record.loop_on_cpu_us = static_cast<double>(*a.on_cpu_ns) / 1e3;
    frame_record.loop_switches_voluntary = a.voluntary_switches;
    frame_record.loop_switches_involuntary = a.involuntary_switches;
    if (a.cpu >= 0) frame_record.loop_cpu = a.cpu;
  }
  if (f.cpu_phase && frame_record.loop_cpu)
    frame_record.workers_on_loop_cpu = static_cast<std::uint32_t>(
        std::count(f.cpu_phase->cpu_by_worker.begin(), f.cpu_phase->cpu_by_worker.end(),
                   *frame_record.loop_cpu));
  if (f.frame_interval_us && f.workers_of_interval) {
    frame_record.workers_run_delay_us =
        static_cast<double>(f.workers_of_interval->run_delay_ns) / 1e3;
    frame_record.workers_run_delay_max_us =
        static_cast<double>(f.workers_of_interval->run_delay_max_ns) / 1e3;
    frame_record.workers_on_cpu_us = static_cast<double>(f.workers_of_interval->on_cpu_ns) / 1e3;
  }
  frame_record.cpu_submit_us = ns_to_us_since(f.cpu_submitted_ns, f.cpu_start_ns);
  frame_record.bg_held = how.held;
  if (how.stamping) {
    frame_record.poll_gap_max_us = static_cast<double>(f.polled.max_scan_gap_ns) / 1000.0;
    frame_record.poll_scans = f.polled.scans;
    if (f.polled.cpu >= 0) frame_record.poller_cpu = f.polled.cpu;
    if (f.polled.run_delay_ns)
      frame_record.poller_run_delay_us = static_cast<double>(*f.polled.run_delay_ns) / 1e3;
    if (f.polled.thread_id != 0) frame_record.poller_thread_id = f.polled.thread_id;
    frame_record.poller_wake_us = static_cast<double>(f.polled.wake_latency_ns) / 1e3;
    frame_record.harness_reschedule_points =
        (f.polled.woke_poller ? 1u : 0u) + (f.polled.waited_for_poller ? 1u : 0u);
  }
  frame_record.calibrated = f.calibrated;
  return frame_record;
}

// Workload `w`'s record of the frame.
WorkloadFrameRecord workload_record_of(const LoopFrame& f, std::size_t w,
                                       const RecordReading& how) {
  WorkloadFrameRecord r;
  r.frame_t0_us = ns_to_us_since(f.t0_ns, how.origin_ns);
  r.frame = f.measured_frame;
  r.workload = w;
  r.variant = how.variants[w];
  if (f.polled.start_ns[w]) {
    r.poll_start_us = ns_to_us_since(*f.polled.start_ns[w], f.t0_ns);
    r.poll_start_window_us = static_cast<double>(f.polled.start_window_ns[w]) / 1000.0;
  }
  if (f.polled.end_ns[w]) {
    r.poll_end_us = ns_to_us_since(*f.polled.end_ns[w], f.t0_ns);
    r.poll_end_window_us = static_cast<double>(f.polled.end_window_ns[w]) / 1000.0;
  }
  // A copy's stamps are written by the copy engine's commands, with no shader clock.
  if (how.shader_clock && f.waited.status == GpuStatus::ok &&
      how.scenario.workloads[w].kind != WorkloadKind::copy) {
    const std::uint32_t* slot = how.stamps.slot(w);
    r.clk_start_ticks =
        shader_clock_ticks(slot, kStampStartFrameWord, kStampStartClockWord, f.frame);
    r.clk_end_ticks = shader_clock_ticks(slot, kStampEndFrameWord, kStampEndClockWord, f.frame);
  }
  if (f.calibration)
    place_device_clocks(r, *f.calibration, how.valid_bits[w],
                        w < f.timestamps.size() ? f.timestamps[w] : std::nullopt, f.t0_ns);
  if (f.waited.status != GpuStatus::ok)
    r.status = status_for(f.waited.status);
  else if (how.stamping && (!r.poll_start_us || !r.poll_end_us))
    r.status = RecordStatus::timeout;
  return r;
}

}  // namespace

const FrameRecord& add_frame_records(ScenarioTimeline& timeline, const LoopFrame& f,
                                     const RecordReading& how) {
  const std::size_t slots = how.scenario.workloads.size();
  FrameRecord frame_record = frame_record_of(f, how);
  for (std::size_t w = 0; w < slots; ++w) {
    const WorkloadFrameRecord r = workload_record_of(f, w, how);
    if (r.poll_start_us &&
        (!frame_record.submit_to_start_us || *r.poll_start_us < *frame_record.submit_to_start_us))
      frame_record.submit_to_start_us = r.poll_start_us;
    if (r.status != RecordStatus::ok && frame_record.status == RecordStatus::ok)
      frame_record.status = r.status;
    timeline.records.push_back(r);
  }
  frame_record.gpu_span_us =
      gpu_span_us(std::span<const WorkloadFrameRecord>(timeline.records).last(slots));
  timeline.frames.push_back(frame_record);
  return timeline.frames.back();
}

}  // namespace gpuoverlap
