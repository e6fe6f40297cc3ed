#include "engine/preemption_loop.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <thread>

#include "core/clock.h"
#include "engine/device_clocks.h"
#include "preemption/load_calibration.h"
#include "queues/sequence_poller.h"
#include "timeline/clock_agreement.h"
#include "workloads/workload.h"

namespace gpuoverlap {
namespace {

using preemption::LoadSize;

constexpr std::uint32_t kLoadsInFlight = 2;  // the load queue never idles between loads
constexpr std::uint32_t kLoadRing = 4;
constexpr std::uint32_t kUrgentRing = 64;  // urgent submissions in flight at most
// The load process keeps loading at most this long past the urgent phase it was started for,
// should its parent never tell it to stop.
constexpr std::int64_t kLoadProcessGraceNs = 30'000'000'000;

struct Submission {
  bool urgent = false;
  std::uint32_t sequence = 0;  // the stamp number (1-based, per stream)
  std::uint32_t ring = 0;      // command buffer and query entry
  bool measured = false;       // a baseline or contended load, or an urgent job
  bool baseline = false;
  std::int64_t submit_ns = 0, submit_return_ns = 0, deadline_ns = 0;
  bool done = false;
  RecordStatus status = RecordStatus::ok;
  std::optional<GpuCalibration> calibration;
  // Per part (urgent: one): timestamp ticks at start and end.
  std::vector<std::optional<TimestampTicks>> ticks;
  std::int64_t wall_end_ns = 0;  // when the CPU saw it complete (calibration fallback)
};

class PreemptionLoop {
 public:
  PreemptionLoop(ScenarioBackend& backend, const Scenario& scenario, const RunSettings& settings,
                 const ProgressCallback& progress, const PreemptionHooks& hooks)
      : backend_(backend),
        scenario_(scenario),
        settings_(settings),
        progress_(progress),
        hooks_(hooks),
        spec_(*scenario.preemption) {}

  PreemptionLoopOutcome run();

 private:
  Status setup();
  Result<std::size_t> submit(bool urgent, bool measured, bool baseline,
                             std::optional<std::size_t> only_part = std::nullopt);
  // Marks finished submissions done (reading their timestamps); with `block`, waits for the
  // oldest unfinished one. An error: a deadline passed or the device was lost.
  Status collect(bool block);
  Result<double> measure_part(std::size_t part, const LoadSize& size);
  Status calibrate();
  void build_timeline(ScenarioTimeline& timeline, const std::vector<SequenceEvent>& events);
  void fail_in_flight(RecordStatus status);
  std::size_t in_flight(bool urgent) const;
  bool stop_requested() const { return settings_.should_stop && settings_.should_stop(); }
  double elapsed_ms(std::int64_t since_ns) const {
    return static_cast<double>(monotonic_raw_ns() - since_ns) / 1e6;
  }

  ScenarioBackend& backend_;
  const Scenario& scenario_;
  const RunSettings& settings_;
  const ProgressCallback& progress_;
  const PreemptionHooks& hooks_;
  const preemption::PreemptionSpec& spec_;

  std::vector<std::size_t> load_parts_;  // workload indices
  std::optional<std::size_t> urgent_;
  std::vector<LoadSize> sizes_;  // per load part, as run
  preemption::PreemptionRunInfo info_;
  bool timestamps_ = false;
  std::vector<std::uint32_t> valid_bits_;  // per workload: its queue's valid timestamp bits
  bool gpu_may_be_busy_ = false;
  double worst_deviation_ns_ = 0;
  std::size_t missed_stamps_ = 0;
  std::uint32_t load_sequence_ = 0, urgent_sequence_ = 0;
  std::vector<Submission> submissions_;  // in submission order
  std::size_t first_unfinished_ = 0;
  std::uint32_t skipped_ticks_ = 0;
  SequencePoller poller_;
};

Status PreemptionLoop::setup() {
  std::optional<std::size_t> load_queue, urgent_queue;
  for (std::size_t w = 0; w < scenario_.workloads.size(); ++w) {
    if (scenario_.workloads[w].name == preemption::kUrgentWorkload) {
      urgent_ = w;
      urgent_queue = scenario_.workloads[w].queue;
    } else {
      load_parts_.push_back(w);
      load_queue = scenario_.workloads[w].queue;
    }
  }
  if (load_parts_.size() > kMaxLoadParts) return make_error("a load has at most two parts");
  // Timestamps only where every queue of the scenario has them.
  timestamps_ = settings_.timestamp_queries;
  valid_bits_ = timestamp_valid_bits_per_workload(backend_.facts(), scenario_);
  for (std::uint32_t bits : valid_bits_) timestamps_ = timestamps_ && bits > 0;
  info_.priority_granted = urgent_queue && *urgent_queue < backend_.facts().queues.size()
                               ? backend_.facts().queues[*urgent_queue].priority_granted
                               : QueuePriority::normal;
  return backend_.prepare_streams({.load_parts = load_parts_,
                                   .urgent = urgent_,
                                   .load_ring = kLoadRing,
                                   .urgent_ring = kUrgentRing,
                                   .timestamps = timestamps_});
}

std::size_t PreemptionLoop::in_flight(bool urgent) const {
  std::size_t n = 0;
  for (std::size_t i = first_unfinished_; i < submissions_.size(); ++i)
    if (!submissions_[i].done && submissions_[i].urgent == urgent) ++n;
  return n;
}

Result<std::size_t> PreemptionLoop::submit(bool urgent, bool measured, bool baseline,
                                           std::optional<std::size_t> only_part) {
  Submission s;
  s.urgent = urgent;
  s.measured = measured;
  s.baseline = baseline;
  s.sequence = urgent ? ++urgent_sequence_ : ++load_sequence_;
  s.ring = (s.sequence - 1) % (urgent ? kUrgentRing : kLoadRing);
  StreamSubmission work{.stream = urgent ? Stream::urgent : Stream::load,
                        .sequence = s.sequence,
                        .ring = s.ring,
                        .parts = {}};
  if (urgent) {
    const WorkloadSpec& spec = scenario_.workloads[*urgent_];
    work.parts.push_back({.part = 0,
                          .workload = *urgent_,
                          .size = {.groups = spec.groups, .iterations = spec.iterations}});
  } else {
    for (std::size_t p = 0; p < load_parts_.size(); ++p)
      if (!only_part || *only_part == p)
        work.parts.push_back({.part = p, .workload = load_parts_[p], .size = sizes_[p]});
  }
  GPUOVERLAP_TRY(backend_.record_stream(work));
  s.submit_ns = monotonic_raw_ns();
  const GpuOutcome submitted = backend_.submit_stream(work);
  s.submit_return_ns = monotonic_raw_ns();
  s.deadline_ns = s.submit_ns + std::int64_t{settings_.frame_timeout_ms} * 1'000'000;
  if (submitted.status != GpuStatus::ok) {
    gpu_may_be_busy_ = true;
    return failure_of(submitted, urgent ? "submitting the urgent job" : "submitting the load");
  }
  submissions_.push_back(s);
  return submissions_.size() - 1;
}

Status PreemptionLoop::collect(bool block) {
  for (std::size_t i = first_unfinished_; i < submissions_.size(); ++i) {
    Submission& s = submissions_[i];
    if (s.done) continue;
    const Stream stream = s.urgent ? Stream::urgent : Stream::load;
    std::uint64_t value = 0;
    GpuOutcome result = backend_.stream_completed(stream, value);
    if (result.status == GpuStatus::ok && value < s.sequence && block) {
      result = backend_.wait_stream(stream, s.sequence, s.deadline_ns);
      if (result.status == GpuStatus::ok) value = s.sequence;
      block = false;  // one blocking wait per call: for the oldest
    }
    if (result.status == GpuStatus::timeout ||
        (result.status == GpuStatus::ok && value < s.sequence &&
         monotonic_raw_ns() > s.deadline_ns)) {
      gpu_may_be_busy_ = true;
      fail_in_flight(RecordStatus::timeout);
      const Error code = backend_.timeout_error();
      return Error{std::string(s.urgent ? "an urgent job" : "a load") + " did not finish within " +
                       std::to_string(settings_.frame_timeout_ms) +
                       " ms of its submission (--timeout-ms); stopped",
                   code.api_code, code.api_code_name};
    }
    if (result.status != GpuStatus::ok) {
      gpu_may_be_busy_ = true;
      fail_in_flight(result.status == GpuStatus::device_lost ? RecordStatus::device_lost
                                                             : RecordStatus::gpu_error);
      return failure_of(result, "waiting for a submission");
    }
    if (value < s.sequence) continue;
    s.done = true;
    s.wall_end_ns = monotonic_raw_ns();
    if (timestamps_)
      s.ticks = backend_.read_stream_timestamps(stream, s.ring, s.urgent ? 1 : load_parts_.size());
    // Also without timestamp queries: it places the shader clock (nullopt when neither clock
    // is on; the backend decides).
    s.calibration = backend_.calibrate();
    if (s.calibration)
      worst_deviation_ns_ =
          std::max(worst_deviation_ns_, static_cast<double>(s.calibration->max_deviation_ns));
  }
  while (first_unfinished_ < submissions_.size() && submissions_[first_unfinished_].done)
    ++first_unfinished_;
  return ok_status();
}

void PreemptionLoop::fail_in_flight(RecordStatus status) {
  for (std::size_t i = first_unfinished_; i < submissions_.size(); ++i)
    if (!submissions_[i].done) {
      submissions_[i].done = true;
      submissions_[i].status = status;
    }
  first_unfinished_ = submissions_.size();
}

Result<double> PreemptionLoop::measure_part(std::size_t part, const LoadSize& size) {
  if (stop_requested()) return make_error("interrupted");
  sizes_[part] = size;
  auto index = submit(false, false, false, part);
  if (!index) return index.error();
  GPUOVERLAP_TRY(collect(true));
  const Submission& s = submissions_[*index];
  if (!s.done) return make_error("the load did not complete");
  // The GPU's own duration where timestamps exist (no submission overhead), else the CPU's.
  if (part < s.ticks.size() && s.ticks[part] && s.ticks[part]->end > s.ticks[part]->start)
    return static_cast<double>(s.ticks[part]->end - s.ticks[part]->start) *
           backend_.facts().timestamps.period_ns / 1e6;
  return static_cast<double>(s.wall_end_ns - s.submit_ns) / 1e6;
}

Status PreemptionLoop::calibrate() {
  const std::uint32_t max_groups = static_cast<std::uint32_t>(std::min<std::uint64_t>(
      kMaxComputeGroups, std::uint64_t{backend_.facts().max_workgroups_x} *
                             kThreadsPerDispatchGroup / kThreadsPerGroupUnit));
  // The load process's parent may be an urgent-only device; sizes follow the scenario made for
  // the spec, so the parts' order here matches plan_parts.
  const std::vector<preemption::PartPlan> plans = preemption::plan_parts(spec_, max_groups);
  if (plans.size() != load_parts_.size()) return make_error("load parts do not match the spec");
  if (!hooks_.known_sizes.empty()) {
    if (hooks_.known_sizes.size() != plans.size())
      return make_error("the sizes of an earlier calibration do not match the load's parts");
    sizes_ = hooks_.known_sizes;
    info_.calibrated = true;
    info_.sizes_from = hooks_.known_sizes_from;
    info_.load_sizes = sizes_;
    return ok_status();
  }
  sizes_.resize(plans.size());
  for (std::size_t p = 0; p < plans.size(); ++p) sizes_[p] = plans[p].start;
  info_.calibrated = false;
  for (std::size_t p = 0; p < plans.size(); ++p) {
    if (!plans[p].growth.empty()) info_.calibrated = true;
    auto part =
        preemption::calibrate_part(plans[p], preemption::part_target_ms(spec_),
                                   [&](const LoadSize& size) { return measure_part(p, size); });
    if (!part) return part.error();
    sizes_[p] = part->size;
    for (const auto& [size, ms] : part->probes)
      info_.calibration.push_back({.part = p, .size = size, .measured_ms = ms});
    if (!part->reached_target)
      info_.calibration_note += (info_.calibration_note.empty() ? "" : "; ") + part->note;
  }
  info_.load_sizes = sizes_;
  return ok_status();
}

PreemptionLoopOutcome PreemptionLoop::run() {
  PreemptionLoopOutcome outcome;
  ScenarioTimeline& timeline = outcome.timeline;
  info_.process = spec_.process;
  if (Status s = setup(); !s) {
    timeline.failure = s.error();
    return outcome;
  }
  // Every stamp word of the scenario's workloads, timed from here on.
  std::vector<SequencePoller::Word> words;
  const StampView stamps = backend_.stamps();
  const bool clocks = backend_.facts().shader_clock.recorded;
  for (std::size_t w = 0; w < scenario_.workloads.size(); ++w) {
    const std::uint32_t* slot = stamps.slot(w);
    words.push_back({slot + kStampStartFrameWord, clocks ? slot + kStampStartClockWord : nullptr});
    words.push_back({slot + kStampEndFrameWord, clocks ? slot + kStampEndClockWord : nullptr});
  }
  const double shortest_ms = std::max(0.05, std::min(spec_.period_ms, spec_.target_ms / 4));
  const std::size_t capacity =
      words.size() * (static_cast<std::size_t>(spec_.duration_ms / shortest_ms) + 4096);
  poller_.start(words, capacity, settings_.poller);

  std::int64_t origin_ns = 0;
  auto fail = [&](const Error& e) {
    if (!timeline.failure) timeline.failure = e;
  };
  if (!load_parts_.empty()) {
    if (Status s = calibrate(); !s) {
      fail(s.error().with_context("load calibration: "));
    } else {
      for (std::uint32_t b = 0; b < spec_.baseline_loads && !timeline.failure; ++b) {
        if (stop_requested()) {
          fail(make_error("interrupted while measuring the load alone"));
          break;
        }
        auto index = submit(false, true, true);
        if (!index)
          fail(index.error());
        else if (Status c = collect(true); !c)
          fail(c.error());
      }
      info_.baseline_loads = spec_.baseline_loads;
    }
  }
  if (!timeline.failure) {
    const std::int64_t start_ns = monotonic_raw_ns();
    origin_ns = start_ns;
    const std::int64_t period_ns = static_cast<std::int64_t>(spec_.period_ms * 1e6);
    const std::int64_t duration_ns = static_cast<std::int64_t>(spec_.duration_ms * 1e6);
    const std::int64_t end_ns = start_ns + duration_ns;
    const std::int64_t load_only_deadline_ns = start_ns + duration_ns + kLoadProcessGraceNs;
    std::int64_t next_tick_ns = start_ns;
    std::int64_t next_progress_ns = start_ns;
    bool announced = false;
    for (;;) {
      const std::int64_t now = monotonic_raw_ns();
      if (stop_requested()) {
        fail(make_error(fmt::format("interrupted after {:.0f} of {:.0f} ms", elapsed_ms(start_ns),
                                    spec_.duration_ms)));
        break;
      }
      if (urgent_ && now >= end_ns) break;
      if (!urgent_) {
        if (hooks_.stop_loading && hooks_.stop_loading()) break;
        if (now >= load_only_deadline_ns) {
          fail(make_error("the load process was never told to stop; stopped at its own deadline"));
          break;
        }
      }
      if (Status c = collect(false); !c) {
        fail(c.error());
        break;
      }
      bool submit_failed = false;
      while (!load_parts_.empty() && in_flight(false) < kLoadsInFlight) {
        if (auto index = submit(false, true, false); !index) {
          fail(index.error());
          submit_failed = true;
          break;
        }
      }
      if (submit_failed) break;
      if (!announced && !urgent_) {
        announced = true;
        timeline.time_origin_ns = origin_ns;
        timeline.preemption = info_;
        if (hooks_.on_loading) hooks_.on_loading(timeline);
      }
      if (urgent_ && now >= next_tick_ns) {
        if (in_flight(true) < kUrgentRing) {
          if (auto index = submit(true, true, false); !index) {
            fail(index.error());
            break;
          }
        } else {
          ++skipped_ticks_;
        }
        next_tick_ns += period_ns;
        while (next_tick_ns <= now) {  // fell behind (a stalled CPU): keep the cadence
          next_tick_ns += period_ns;
          ++skipped_ticks_;
        }
      }
      if (progress_ && now >= next_progress_ns) {
        progress_(static_cast<std::uint32_t>(elapsed_ms(start_ns)),
                  static_cast<std::uint32_t>(spec_.duration_ms));
        next_progress_ns = now + 100'000'000;
      }
      // At most 1 ms asleep, so finished loads are replaced promptly.
      const std::int64_t wake_ns = std::min(urgent_ ? next_tick_ns : INT64_MAX, now + 1'000'000);
      if (wake_ns > now) std::this_thread::sleep_for(std::chrono::nanoseconds(wake_ns - now));
    }
    // Ticks due before the end that the loop woke too late for: skipped, so that submissions
    // plus skipped ticks are always ceil(duration / period) for a run that was not cut short.
    if (urgent_ && !timeline.failure)
      for (; next_tick_ns < end_ns; next_tick_ns += period_ns) ++skipped_ticks_;
  }
  // Drain: everything submitted finishes or meets its deadline.
  while (first_unfinished_ < submissions_.size()) {
    if (Status c = collect(true); !c) {
      fail(c.error());
      break;
    }
  }
  const std::vector<SequenceEvent> events = poller_.stop();
  timeline.time_origin_ns = origin_ns;
  info_.load_sizes = sizes_;
  build_timeline(timeline, events);
  nlohmann::json meta = to_json(backend_.facts());
  meta["preemption_missed_stamps"] = missed_stamps_;
  meta["preemption"] = preemption::to_json(info_);
  meta["preemption"]["spec"] = preemption::to_json(spec_);
  meta["preemption"]["skipped_ticks"] = skipped_ticks_;
  meta["preemption"]["poller_overflowed"] = poller_.overflowed();
  meta["preemption"]["poller_max_scan_gap_us"] =
      static_cast<double>(poller_.max_scan_gap_ns()) / 1000.0;
  meta["preemption"]["poller_scans"] = poller_.scans();
  meta["clocks"]["timestamp"]["max_calibration_deviation_ns"] = worst_deviation_ns_;
  if (clocks)
    meta["clocks"]["shader_clock"]["verification"] = verify_shader_clock_timebase(timeline);
  timeline.meta = meta;
  timeline.preemption = info_;
  outcome.gpu_may_be_busy = gpu_may_be_busy_;
  return outcome;
}

void PreemptionLoop::build_timeline(ScenarioTimeline& timeline,
                                    const std::vector<SequenceEvent>& events) {
  // (word, number) -> first sighting.
  std::map<std::pair<std::uint32_t, std::uint32_t>, const SequenceEvent*> seen;
  for (const SequenceEvent& e : events) seen.try_emplace({e.word, e.value}, &e);
  const std::int64_t origin = timeline.time_origin_ns;
  const bool clocks = backend_.facts().shader_clock.recorded;
  std::uint32_t load_index = 0, urgent_index = 0;
  for (const Submission& s : submissions_) {
    if (!s.measured) continue;
    const std::uint32_t index = s.urgent ? urgent_index++ : load_index++;
    std::vector<std::size_t> parts;
    if (s.urgent)
      parts.push_back(*urgent_);
    else
      parts = load_parts_;
    for (std::size_t p = 0; p < parts.size(); ++p) {
      const std::size_t w = parts[p];
      WorkloadFrameRecord r;
      r.frame = index;
      r.workload = w;
      r.frame_t0_us = ns_to_us_since(s.submit_ns, origin);
      r.status = s.status;
      const auto start = seen.find({static_cast<std::uint32_t>(2 * w), s.sequence});
      const auto end = seen.find({static_cast<std::uint32_t>(2 * w + 1), s.sequence});
      if (start != seen.end()) {
        r.poll_start_us = ns_to_us_since(start->second->seen_ns, s.submit_ns);
        r.poll_start_window_us = static_cast<double>(start->second->window_ns) / 1000.0;
      }
      if (end != seen.end()) {
        r.poll_end_us = ns_to_us_since(end->second->seen_ns, s.submit_ns);
        r.poll_end_window_us = static_cast<double>(end->second->window_ns) / 1000.0;
      }
      // The first thread counts itself started, then stores its stamp; descheduled in between
      // (a CPU driver's thread can be), its stamp lands after the last thread's end stamp. The
      // work had started by the time any thread finished, so the end bounds the start, with
      // the end's window.
      if (r.poll_start_us && r.poll_end_us && *r.poll_start_us > *r.poll_end_us) {
        r.poll_start_us = r.poll_end_us;
        r.poll_start_window_us = r.poll_end_window_us;
      }
      if (r.status == RecordStatus::ok && (!r.poll_start_us || !r.poll_end_us)) ++missed_stamps_;
      if (s.calibration) {
        if (clocks && start != seen.end() && end != seen.end() && start->second->clock_ticks &&
            end->second->clock_ticks) {
          r.clk_start_ticks = start->second->clock_ticks;
          r.clk_end_ticks = end->second->clock_ticks;
        }
        place_device_clocks(r, *s.calibration, valid_bits_[w],
                            p < s.ticks.size() ? s.ticks[p] : std::nullopt, s.submit_ns);
      }
      timeline.records.push_back(r);
    }
    if (s.urgent) {
      FrameRecord f;
      f.frame = index;
      f.cpu_start_us = ns_to_us_since(s.submit_ns, origin);
      f.cpu_submit_us = ns_to_us_since(s.submit_return_ns, s.submit_ns);
      f.cpu_frame_us = f.cpu_submit_us;
      f.submit_to_start_us = timeline.records.back().poll_start_us;
      f.status = s.status;
      timeline.frames.push_back(f);
    }
  }
}

}  // namespace

PreemptionLoopOutcome run_preemption_loop(ScenarioBackend& backend, const Scenario& scenario,
                                          const RunSettings& settings,
                                          const ProgressCallback& progress,
                                          const PreemptionHooks& hooks) {
  PreemptionLoop loop(backend, scenario, settings, progress, hooks);
  return loop.run();
}

}  // namespace gpuoverlap
