#include "engine/sched_attribution.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <system_error>
#include <thread>

#include "core/clock.h"
#include "core/cpu_affinity.h"
#include "core/gzip.h"
#include "schedtrace/thread_waits.h"
#include "timeline/statistics.h"

#if defined(__linux__)
#include <unistd.h>
#endif

namespace gpuoverlap {

namespace {

std::int32_t this_process_id() {
#if defined(__linux__)
  return static_cast<std::int32_t>(getpid());
#else
  return -1;
#endif
}

double us(std::int64_t ns) { return static_cast<double>(ns) / 1000.0; }
double ms(std::int64_t ns) { return static_cast<double>(ns) / 1e6; }

struct FrameInterval {
  std::size_t frame_index = 0;  // into timeline.frames
  std::int64_t from_ns = 0, to_ns = 0;
};

// Each measured frame's interval as frames.csv's loop columns count it: from the frame
// before's start to this one's (frame_interval_us ending at cpu_start_us).
std::vector<FrameInterval> frame_intervals(const ScenarioTimeline& timeline) {
  std::vector<FrameInterval> out;
  for (std::size_t i = 0; i < timeline.frames.size(); ++i) {
    const FrameRecord& f = timeline.frames[i];
    if (!f.frame_interval_us) continue;
    const auto to_ns = timeline.time_origin_ns + static_cast<std::int64_t>(f.cpu_start_us * 1000.0);
    out.push_back({i, to_ns - static_cast<std::int64_t>(*f.frame_interval_us * 1000.0), to_ns});
  }
  return out;
}

// The frame loop's waits in one sentence, with the dominant way it lost its CPU to background
// threads: "the frame loop was runnable without a CPU 12.3 ms in 300 frames (98 % of its run
// delay): 8.1 ms behind background threads, mostly after it yielded, until the next tick (7.9 ms,
// 140 times, p50 3.90 ms)".
std::string summary_sentence(const std::vector<ThreadWait>& loop_waits, std::size_t frames,
                             std::int64_t runnable_ns, std::optional<std::int64_t> run_delay_ns) {
  std::string text = fmt::format("the frame loop was runnable without a CPU {:.1f} ms in {} frames",
                                 ms(runnable_ns), frames);
  if (run_delay_ns && *run_delay_ns > 0)
    text +=
        fmt::format(" ({:.0f} % of its run delay, {:.1f} ms)",
                    100.0 * static_cast<double>(runnable_ns) / static_cast<double>(*run_delay_ns),
                    ms(*run_delay_ns));
  std::int64_t background_ns = 0;
  std::map<std::string, std::vector<double>> ms_by_way;
  for (const ThreadWait& w : loop_waits) {
    if (w.holder_kind != ThreadKind::background) continue;
    background_ns += w.runnable_ns();
    ms_by_way[fmt::format("{}, {}", lost_phrase(w.lost_by), back_phrase(w.given_back_by))]
        .push_back(ms(w.runnable_ns()));
  }
  const auto most = costliest_way(ms_by_way);
  if (background_ns == 0 || !most) return text + ": none of it behind a background thread";
  return text + fmt::format(": {:.1f} ms behind background threads, {}", ms(background_ns),
                            describe(*most));
}

}  // namespace

std::optional<CostliestWay> costliest_way(
    const std::map<std::string, std::vector<double>>& ms_by_way) {
  std::optional<CostliestWay> most;
  for (const auto& [way, values] : ms_by_way) {
    double total_ms = 0;
    for (double v : values) total_ms += v;
    if (most && total_ms <= most->total_ms) continue;
    most = CostliestWay{way, total_ms, values.size(), percentile(values, 50.0).value_or(0)};
  }
  return most;
}

std::string describe(const CostliestWay& way) {
  return fmt::format("mostly {} ({:.1f} ms, {} times, p50 {:.2f} ms)", way.way, way.total_ms,
                     way.times, way.p50_ms);
}

namespace {

// Who ran on each CPU in [from_ns, to_ns], from the record's switches and, where the kernel
// wrote none, from the lines each task left on the CPU; the idle task left out.
std::vector<SchedCpuSlice> cpu_slices(const SchedRecord& record, std::int64_t from_ns,
                                      std::int64_t to_ns, std::int64_t origin_ns,
                                      std::int32_t process_tgid) {
  struct Running {
    std::int32_t tid = 0;
    std::string comm;
    std::int64_t since_ns = 0;
    std::int64_t last_seen_ns = 0;  // its latest line on the CPU
  };
  std::map<std::int32_t, Running> running;
  std::map<std::int32_t, std::int32_t> tgid_of;
  for (const SchedEvent& e : record.events)
    if (e.tgid >= 0) tgid_of.emplace(e.tid, e.tgid);
  std::vector<SchedCpuSlice> out;
  auto close = [&](std::int32_t cpu, const Running& r, std::int64_t end_ns) {
    const std::int64_t start_ns = std::max(r.since_ns, from_ns);
    end_ns = std::min(end_ns, to_ns);
    if (r.tid == 0 || end_ns <= start_ns) return;
    const auto tgid = tgid_of.find(r.tid);
    const bool ours = tgid != tgid_of.end() && tgid->second == process_tgid;
    const ThreadKind kind = ours ? (is_background_thread_name(r.comm) ? ThreadKind::background
                                                                      : ThreadKind::frame_thread)
                            : is_kernel_thread_name(r.comm) ? ThreadKind::kernel
                                                            : ThreadKind::other_process;
    out.push_back({cpu, us(start_ns - origin_ns), us(end_ns - origin_ns),
                   fmt::format("{}-{}", r.comm, r.tid),
                   std::string(name_of(kThreadKindNames, kind))});
  };
  for (const SchedEvent& e : record.events) {
    if (e.time_ns > to_ns) break;
    auto it = running.find(e.cpu);
    if (e.kind == SchedEventKind::switch_task) {
      // A switch away from a thread the record never showed coming in names the thread that
      // held the CPU just before; the one the lane had ran until its own last line at least.
      if (it != running.end())
        close(e.cpu, it->second,
              it->second.tid == e.prev_tid ? e.time_ns : it->second.last_seen_ns);
      running[e.cpu] = {e.next_tid, e.next_comm, e.time_ns, e.time_ns};
    } else if (e.tid >= 0 && (it == running.end() || it->second.tid != e.tid)) {
      // A task the record shows on the CPU without a switch to it (thread_waits.cpp,
      // seen_running): it runs there from this line at the latest. The idle task's lines (tid
      // 0) end the lane's slice: the CPU went idle without a recorded switch.
      if (it != running.end()) close(e.cpu, it->second, e.time_ns);
      running[e.cpu] = {e.tid, e.comm, e.time_ns, e.time_ns};
    } else if (it != running.end()) {
      it->second.last_seen_ns = e.time_ns;
    }
  }
  for (const auto& [cpu, r] : running) close(cpu, r, to_ns);
  return out;
}

// A frame's run delay past what the record shows runnable, below which the two simply differ by
// where the interval's ends fall (the record's µs stamps, the schedstat read's own instant).
constexpr std::int64_t kAsleepExcessNs = 1'000'000;

}  // namespace

void attach_sched_record(ScenarioTimeline& timeline, const SchedRecord& record,
                         const ForegroundThreads& threads, std::int32_t process_tgid,
                         const std::vector<std::int32_t>& overrun_cpus) {
  std::map<std::int32_t, std::string> roles;
  roles[static_cast<std::int32_t>(threads.frame_loop)] = "frame loop";
  if (threads.poller != 0) roles[static_cast<std::int32_t>(threads.poller)] = "poller";
  for (std::size_t w = 0; w < threads.workers.size(); ++w)
    if (threads.workers[w] != 0)
      roles[static_cast<std::int32_t>(threads.workers[w])] = fmt::format("worker {}", w);
  std::set<std::int32_t> tids;
  for (const auto& [tid, role] : roles) tids.insert(tid);

  const std::vector<FrameInterval> intervals = frame_intervals(timeline);
  nlohmann::json meta = {{"recorded", true},
                         {"events", record.events.size()},
                         {"unreadable_lines", record.unreadable_lines},
                         {"overrun_cpus", overrun_cpus},
                         {"buffer_kb_per_cpu", kSchedTraceBufferKbPerCpu}};
  nlohmann::json lost = nlohmann::json::object();
  for (const auto& [cpu, count] : record.lost_events_by_cpu) lost[std::to_string(cpu)] = count;
  meta["lost_events_by_cpu"] = lost;
  timeline.sched_recorded = true;
  if (intervals.empty()) {
    meta["why_no_waits"] = "no measured frame has a frame interval";
    timeline.meta["sched_trace"] = meta;
    return;
  }
  const std::int64_t from_ns = intervals.front().from_ns;
  const std::int64_t to_ns = intervals.back().to_ns;
  WaitOptions options{process_tgid, is_kernel_thread_now};
  const std::vector<ThreadWait> waits = thread_waits(record, tids, from_ns, to_ns, options);

  const auto loop_tid = static_cast<std::int32_t>(threads.frame_loop);
  std::int64_t loop_runnable_ns = 0;
  std::int64_t run_delay_ns = 0;
  bool run_delay_known = false;
  std::int64_t asleep_in_run_delay_ns = 0;
  std::size_t frames_asleep_in_run_delay = 0;
  const WaitIndex index(waits);
  for (const FrameInterval& interval : intervals) {
    FrameRecord& f = timeline.frames[interval.frame_index];
    const WaitTotals loop = index.totals(loop_tid, interval.from_ns, interval.to_ns);
    f.sched_loop_runnable_us = us(loop.runnable_ns);
    f.sched_loop_to_background_us = us(loop.to_background_ns);
    f.sched_loop_longest = loop.longest ? describe(*loop.longest) : std::string();
    loop_runnable_ns += loop.runnable_ns;
    if (f.loop_run_delay_us) {
      run_delay_known = true;
      const auto frame_delay_ns = static_cast<std::int64_t>(*f.loop_run_delay_us * 1000.0);
      run_delay_ns += frame_delay_ns;
      // The kernel's schedstat counted more run delay than the record shows runnable, and the
      // record shows the thread asleep for at least that long: a sleep counted as run delay
      // (seen on Linux 6.18 with EEVDF: likely a thread that blocked while the scheduler kept
      // it queued, "delayed dequeue"). Counted apart, so that neither figure is trusted blind.
      const std::int64_t excess_ns = frame_delay_ns - loop.runnable_ns;
      if (excess_ns > kAsleepExcessNs && loop.blocked_ns >= excess_ns) {
        asleep_in_run_delay_ns += excess_ns;
        ++frames_asleep_in_run_delay;
      }
    }
    if (!threads.workers.empty()) {
      std::int64_t runnable = 0, to_background = 0;
      for (std::int64_t worker : threads.workers) {
        const WaitTotals t =
            index.totals(static_cast<std::int32_t>(worker), interval.from_ns, interval.to_ns);
        runnable += t.runnable_ns;
        to_background += t.to_background_ns;
      }
      f.sched_workers_runnable_us = us(runnable);
      f.sched_workers_to_background_us = us(to_background);
    }
  }

  timeline.sched_cpu_slices =
      cpu_slices(record, from_ns, to_ns, timeline.time_origin_ns, process_tgid);
  std::vector<ThreadWait> loop_waits;
  for (const ThreadWait& w : waits) {
    SchedWaitRow row;
    row.thread = roles[w.tid];
    row.thread_id = w.tid;
    // The measured frame whose interval holds the wait's end.
    const auto after =
        std::upper_bound(intervals.begin(), intervals.end(), w.on_ns,
                         [](std::int64_t t, const FrameInterval& i) { return t < i.to_ns; });
    if (after != intervals.end() && w.on_ns >= after->from_ns)
      row.frame = timeline.frames[after->frame_index].frame;
    row.off_us = us(w.off_ns - timeline.time_origin_ns);
    row.on_us = us(w.on_ns - timeline.time_origin_ns);
    row.runnable_us = us(w.runnable_ns());
    row.cpu_out = w.cpu_out;
    row.cpu_in = w.cpu_in;
    row.lost_by = name_of(kLostByNames, w.lost_by);
    row.blocked = w.lost_by == LostBy::blocked;
    row.holder = w.holder;
    row.holder_kind = name_of(kThreadKindNames, w.holder_kind);
    row.holder_prio = w.holder_prio;
    row.given_back_by = name_of(kGivenBackByNames, w.given_back_by);
    row.waker = w.waker;
    if (w.lost_by == LostBy::blocked) row.waker_kind = name_of(kThreadKindNames, w.waker_kind);
    if (w.waker_waited_ns >= 0) row.waker_waited_us = us(w.waker_waited_ns);
    row.lost_events = w.lost_events;
    row.text = describe(w);
    timeline.sched_waits.push_back(std::move(row));
    if (w.tid == loop_tid) loop_waits.push_back(w);
  }
  std::string summary =
      summary_sentence(loop_waits, intervals.size(), loop_runnable_ns,
                       run_delay_known ? std::optional(run_delay_ns) : std::nullopt);
  if (frames_asleep_in_run_delay > 0)
    summary += fmt::format(
        "; the kernel's run delay also counted {:.1f} ms in {} frames in which "
        "the record shows the frame loop asleep",
        ms(asleep_in_run_delay_ns), frames_asleep_in_run_delay);
  meta["frame_loop"] = {{"runnable_ms", ms(loop_runnable_ns)},
                        {"run_delay_ms", run_delay_known ? nlohmann::json(ms(run_delay_ns))
                                                         : nlohmann::json(nullptr)},
                        {"run_delay_asleep_ms", ms(asleep_in_run_delay_ns)},
                        {"frames_run_delay_asleep", frames_asleep_in_run_delay},
                        {"summary", summary}};
  timeline.meta["sched_trace"] = meta;
}

namespace {

// The scopes recording a scenario's frames now (SchedTraceScope, between start and stop).
std::atomic<int> scopes_recording{0};

// The threads the record's text may use: none beside this one while another scope records.
std::size_t text_threads() {
  if (scopes_recording.load() > 0) return 1;
  const auto cpus = this_thread_cpus();
  const std::size_t usable = cpus ? cpus->size() : 1;
  return std::clamp<std::size_t>(usable, 1, kSchedTraceTextThreads);
}

// The text of `record` in parts of at least kEventsPerPart events, rendered on up to `threads`
// threads, then compressed as one gzip member the same way; `text_bytes` gets its length.
constexpr std::size_t kEventsPerPart = 2000;
Result<std::string> record_text_gz(const SchedRecord& record, std::size_t threads,
                                   std::size_t& text_bytes, std::int64_t& compress_from_ns) {
  const std::size_t events = record.events.size();
  const std::size_t count =
      std::clamp<std::size_t>(events / kEventsPerPart, 1, std::max<std::size_t>(threads, 1));
  std::vector<std::string> parts(count);
  std::vector<std::string> failures(count);
  std::atomic<std::size_t> next{0};
  // No exception leaves a thread (one that did would end the process); a part that failed is
  // an error for the file alone, which meta.json's file_why_not then gives.
  const auto render = [&]() noexcept {
    for (std::size_t i; (i = next.fetch_add(1)) < count;) {
      try {
        parts[i] = sched_record_text(record, events * i / count, events * (i + 1) / count);
      } catch (const std::exception& e) {
        failures[i] = e.what();
      }
    }
  };
  {
    std::vector<std::jthread> helpers;  // joined when the scope ends, however it ends
    for (std::size_t t = 1; t < count; ++t) {
      try {
        helpers.emplace_back(render);
      } catch (const std::system_error&) {
        break;  // no thread to be had: the ones there are, and this one, render the rest
      }
    }
    render();
  }
  for (const std::string& failure : failures)
    if (!failure.empty()) return make_error("rendering the record's text: " + failure);
  text_bytes = 0;
  for (const std::string& p : parts) text_bytes += p.size();
  compress_from_ns = monotonic_raw_ns();
  return gzip_compress_parts(parts, GzipEffort::fast, threads);
}

}  // namespace

SchedTraceScope::SchedTraceScope(bool wanted) : wanted_(wanted) {
  if (!wanted) return;
  const std::int64_t from_ns = monotonic_raw_ns();
  auto started = TracefsRecording::start(kSchedTraceBufferKbPerCpu);
  start_ms_ = ms(monotonic_raw_ns() - from_ns);
  if (started) {
    instance_ = started->instance();
    recording_.emplace(std::move(*started));
    scopes_recording.fetch_add(1);
    recording_counted_ = true;
  } else {
    why_not_ = started.error().message;
  }
}

SchedTraceScope::~SchedTraceScope() { end_recording(); }

void SchedTraceScope::end_recording() {
  if (!recording_counted_) return;
  recording_counted_ = false;
  scopes_recording.fetch_sub(1);
}

void SchedTraceScope::stop() {
  if (!recording_) return;
  const std::int64_t from_ns = monotonic_raw_ns();
  auto data = recording_->stop();
  read_ms_ = ms(monotonic_raw_ns() - from_ns);
  recording_.reset();
  end_recording();
  if (data)
    data_ = std::move(*data);
  else
    why_not_ = data.error().message;
}

void SchedTraceScope::attach(ScenarioTimeline& timeline, const ForegroundThreads& threads) {
  if (!wanted_) return;
  stop();
  if (!data_) {
    timeline.meta["sched_trace"] = {{"recorded", false}, {"why", why_not_}};
    return;
  }
  // What the record cost after the frames, step by step (meta.json sched_trace.cost_ms): the
  // tool's own time, which a study's rounds wait for.
  const std::int64_t parse_from_ns = monotonic_raw_ns();
  const SchedRecord record = data_->parse();
  const std::size_t raw_bytes = data_->bytes();
  const std::vector<std::int32_t> overrun_cpus = data_->overrun_cpus();
  data_.reset();
  const std::int64_t attribute_from_ns = monotonic_raw_ns();
  attach_sched_record(timeline, record, threads, this_process_id(), overrun_cpus);
  const std::int64_t render_from_ns = monotonic_raw_ns();
  const std::size_t text_thread_count = text_threads();
  std::size_t text_bytes = 0;
  std::int64_t compress_from_ns = render_from_ns;
  auto compressed = record_text_gz(record, text_thread_count, text_bytes, compress_from_ns);
  const std::int64_t done_ns = monotonic_raw_ns();
  auto& meta = timeline.meta["sched_trace"];
  if (!compressed) {
    // The record's explanation stands; only its file is missing, and meta.json says so.
    meta["file_why_not"] = compressed.error().message;
  } else {
    timeline.sched_record_gz = std::move(*compressed);
  }
  meta["raw_mb"] = std::round(double(raw_bytes) / 1e4) / 100;
  meta["text_mb"] = std::round(double(text_bytes) / 1e4) / 100;
  meta["text_threads"] = text_thread_count;
  auto tenths = [](double v) { return std::round(v * 10) / 10; };
  meta["instance"] = instance_;
  meta["cost_ms"] = {{"start", tenths(start_ms_)},
                     {"read", tenths(read_ms_)},
                     {"parse", tenths(ms(attribute_from_ns - parse_from_ns))},
                     {"attribute", tenths(ms(render_from_ns - attribute_from_ns))},
                     {"render", tenths(ms(compress_from_ns - render_from_ns))},
                     {"compress", tenths(ms(done_ns - compress_from_ns))}};
}

}  // namespace gpuoverlap
