#include "timeline/trace_export.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <string_view>

#include "scenarios/scenario.h"

namespace gpuoverlap {

namespace {

// The metadata events that name and order the lanes: a process per queue, a thread per
// workload.
nlohmann::json lane_names(const Scenario& s) {
  nlohmann::json events = nlohmann::json::array();
  // pid = queue index + 1, tid = workload index + 1 (0 is avoided: some viewers treat it
  // specially).
  for (std::size_t q = 0; q < s.queues.size(); ++q) {
    const int pid = static_cast<int>(q) + 1;
    events.push_back(
        {{"ph", "M"},
         {"pid", pid},
         {"name", "process_name"},
         {"args",
          {{"name", s.queues[q].name + " queue (" + std::string(to_string(s.queues[q].type)) +
                        ", " + std::string(to_string(s.queues[q].priority)) + ")"}}}});
    events.push_back({{"ph", "M"},
                      {"pid", pid},
                      {"name", "process_sort_index"},
                      {"args", {{"sort_index", pid}}}});
  }
  for (std::size_t w = 0; w < s.workloads.size(); ++w) {
    const int pid = static_cast<int>(s.workloads[w].queue) + 1;
    const int tid = static_cast<int>(w) + 1;
    events.push_back({{"ph", "M"},
                      {"pid", pid},
                      {"tid", tid},
                      {"name", "thread_name"},
                      {"args", {{"name", s.workloads[w].name}}}});
    events.push_back({{"ph", "M"},
                      {"pid", pid},
                      {"tid", tid},
                      {"name", "thread_sort_index"},
                      {"args", {{"sort_index", tid}}}});
  }

  return events;
}

void name_process(nlohmann::json& events, int pid, const std::string& name) {
  events.push_back(
      {{"ph", "M"}, {"pid", pid}, {"name", "process_name"}, {"args", {{"name", name}}}});
  events.push_back(
      {{"ph", "M"}, {"pid", pid}, {"name", "process_sort_index"}, {"args", {{"sort_index", pid}}}});
}

void name_thread(nlohmann::json& events, int pid, int tid, const std::string& name) {
  events.push_back({{"ph", "M"},
                    {"pid", pid},
                    {"tid", tid},
                    {"name", "thread_name"},
                    {"args", {{"name", name}}}});
  events.push_back({{"ph", "M"},
                    {"pid", pid},
                    {"tid", tid},
                    {"name", "thread_sort_index"},
                    {"args", {{"sort_index", tid}}}});
}

// JSON text of a DOM part. A thread's name from the kernel (its comm, cut at 15 bytes) may end
// inside a UTF-8 character: such bytes become U+FFFD instead of failing the whole file.
std::string dump(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void append_string(std::string& out, std::string_view text) {
  const bool plain = std::all_of(text.begin(), text.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u >= 0x20 && u < 0x80 && c != '"' && c != '\\';
  });
  if (!plain) {
    out += dump(std::string(text));
    return;
  }
  out += '"';
  out += text;
  out += '"';
}

// A time in µs to the nanosecond, which is what the record has: the shortest round trip of a
// difference of two such times spells out its rounding error ("0.9820000007748604"): text to
// write and compress that says nothing.
void append_us(std::string& out, double value_us) {
  if (!std::isfinite(value_us)) {
    out += "null";  // as the DOM writes it
    return;
  }
  fmt::format_to(std::back_inserter(out), "{:.3f}", value_us);
}

// A complete slice written straight to the trace's text, after a comma: the kernel record's
// lanes hold hundreds of thousands of slices a scenario, and building them as a DOM first took
// seconds between a study's rounds (4.2 s for 200 frames on lavapipe, 51 MB of JSON).
void append_slice(std::string& out, int pid, int tid, std::string_view name,
                  std::string_view category, double start_us, double end_us,
                  const SchedWaitRow* wait = nullptr) {
  out += ",{\"ph\":\"X\",\"cat\":";
  append_string(out, category);
  out += ",\"name\":";
  append_string(out, name);
  fmt::format_to(std::back_inserter(out), ",\"pid\":{},\"tid\":{},\"ts\":", pid, tid);
  append_us(out, start_us);
  out += ",\"dur\":";
  append_us(out, end_us - start_us);
  if (wait) {
    fmt::format_to(std::back_inserter(out),
                   ",\"args\":{{\"cpu_in\":{},\"cpu_out\":{},\"wait\":", wait->cpu_in,
                   wait->cpu_out);
    append_string(out, wait->text);
    out += '}';
  }
  out += '}';
}

// The kernel's record (run --sched-trace) beside the queues: a process of CPU lanes, each
// naming the thread that ran there, and a process of the foreground's threads with their states
// (Running, Runnable after a preemption or a wake-up, Sleeping), from sched_waits. The lanes'
// names go to `events`, their slices to `slices` as text.
void add_sched_lanes(const Scenario& s, const ScenarioTimeline& timeline, nlohmann::json& events,
                     std::string& slices) {
  const int cpus_pid = static_cast<int>(s.queues.size()) + 2;
  name_process(events, cpus_pid, "CPUs (kernel record)");
  std::map<int, bool> cpus;
  for (const SchedCpuSlice& c : timeline.sched_cpu_slices) {
    cpus[c.cpu] = true;
    append_slice(slices, cpus_pid, c.cpu + 1, c.thread, c.kind, c.start_us, c.end_us);
  }
  for (const auto& [cpu, seen] : cpus)
    name_thread(events, cpus_pid, cpu + 1, "CPU " + std::to_string(cpu));

  const int threads_pid = cpus_pid + 1;
  name_process(events, threads_pid, "foreground threads (kernel record)");
  std::map<std::string, int> lanes;  // thread -> tid, in order of first appearance
  std::map<std::string, double> last_on_us;
  for (const SchedWaitRow& w : timeline.sched_waits) {
    const auto [lane, added] = lanes.try_emplace(w.thread, static_cast<int>(lanes.size()) + 1);
    if (added) name_thread(events, threads_pid, lane->second, w.thread);
    const int tid = lane->second;
    if (auto on = last_on_us.find(w.thread); on != last_on_us.end() && on->second < w.off_us)
      append_slice(slices, threads_pid, tid, "Running", "running", on->second, w.off_us);
    const double runnable_from_us = w.on_us - w.runnable_us;
    if (w.blocked) {
      append_slice(slices, threads_pid, tid, "Sleeping", "sleeping", w.off_us, runnable_from_us,
                   &w);
      if (w.runnable_us > 0)
        append_slice(slices, threads_pid, tid, "Runnable (woken)", "runnable", runnable_from_us,
                     w.on_us, &w);
    } else {
      append_slice(slices, threads_pid, tid, "Runnable (preempted)", "runnable", w.off_us, w.on_us,
                   &w);
    }
    last_on_us[w.thread] = w.on_us;
  }
}

}  // namespace

std::string chrome_trace(const Scenario& s, const ScenarioTimeline& timeline,
                         const nlohmann::json& meta) {
  nlohmann::json events = lane_names(s);

  // Slices: only frames whose stamps both arrived.
  struct Slice {
    double start_us, end_us;
  };
  std::map<std::pair<std::uint32_t, std::size_t>, Slice> slices;  // (frame, workload)
  for (const WorkloadFrameRecord& r : timeline.records) {
    if (r.status != RecordStatus::ok || !r.poll_start_us || !r.poll_end_us) continue;
    const Slice slice{r.frame_t0_us + *r.poll_start_us, r.frame_t0_us + *r.poll_end_us};
    slices[{r.frame, r.workload}] = slice;
    const WorkloadSpec& w = s.workloads[r.workload];
    nlohmann::json args = {
        {"frame", r.frame}, {"start_us", *r.poll_start_us}, {"end_us", *r.poll_end_us}};
    // Each poll time's uncertainty: written within this window before it.
    if (r.poll_start_window_us) args["start_window_us"] = *r.poll_start_window_us;
    if (r.poll_end_window_us) args["end_window_us"] = *r.poll_end_window_us;
    if (r.poll_disturbed)
      args["poll_disturbed"] = std::string(poll_disturbance_names(r.poll_disturbed));
    if (r.ts_start_us && r.ts_end_us) {
      args["ts_start_us"] = *r.ts_start_us;
      args["ts_end_us"] = *r.ts_end_us;
    }
    events.push_back({{"ph", "X"},
                      {"cat", to_string(w.kind)},
                      {"name", w.name},
                      {"pid", static_cast<int>(w.queue) + 1},
                      {"tid", static_cast<int>(r.workload) + 1},
                      {"ts", slice.start_us},
                      {"dur", slice.end_us - slice.start_us},
                      {"args", args}});
  }

  // Flows: the "s" event sits inside the producer's slice (at its end, pulled in by a hair so
  // it binds to that slice), the "f" event at the consumer's start, binding to the enclosing
  // slice ("bp": "e").
  std::uint64_t flow_id = 1;
  for (const auto& [key, consumer_slice] : slices) {
    const auto [frame, consumer] = key;
    for (const DependencySpec& d : s.workloads[consumer].depends_on) {
      const auto producer = slices.find({frame, d.producer});
      if (producer == slices.end()) continue;
      const Slice& p = producer->second;
      const double inside =
          std::max(p.start_us, p.end_us - std::min(0.001, (p.end_us - p.start_us) / 2));
      const std::string name = std::string(barrier_label(d.barrier)) + " barrier";
      events.push_back({{"ph", "s"},
                        {"cat", "dependency"},
                        {"name", name},
                        {"id", flow_id},
                        {"pid", static_cast<int>(s.workloads[d.producer].queue) + 1},
                        {"tid", static_cast<int>(d.producer) + 1},
                        {"ts", inside}});
      events.push_back({{"ph", "f"},
                        {"bp", "e"},
                        {"cat", "dependency"},
                        {"name", name},
                        {"id", flow_id},
                        {"pid", static_cast<int>(s.workloads[consumer].queue) + 1},
                        {"tid", static_cast<int>(consumer) + 1},
                        {"ts", consumer_slice.start_us}});
      ++flow_id;
    }
  }
  // Background compiles: one more process, a lane per thread (managed pool, then the
  // unmanaged control's threads), on the same axis (µs from the first measured frame's t0).
  if (!timeline.background_tasks.empty()) {
    const int pid = static_cast<int>(s.queues.size()) + 1;
    events.push_back({{"ph", "M"},
                      {"pid", pid},
                      {"name", "process_name"},
                      {"args", {{"name", "background compiles (CPU)"}}}});
    events.push_back({{"ph", "M"},
                      {"pid", pid},
                      {"name", "process_sort_index"},
                      {"args", {{"sort_index", pid}}}});
    std::map<int, std::string> lanes;
    for (const background::BackgroundTaskRecord& t : timeline.background_tasks) {
      if (t.start_ns == 0) continue;  // cancelled before it ran
      const int tid = (t.managed ? 1 : 1001) + t.worker;
      lanes[tid] = t.managed ? (t.boosted ? "high-priority commit thread " : "idle thread ") +
                                   std::to_string(t.worker)
                             : "unmanaged thread " + std::to_string(t.worker);
      const double start_us = static_cast<double>(t.start_ns - timeline.time_origin_ns) / 1e3;
      const double end_us = static_cast<double>(t.finish_ns - timeline.time_origin_ns) / 1e3;
      events.push_back({{"ph", "X"},
                        {"cat", t.managed ? "managed" : "unmanaged"},
                        {"name", t.label},
                        {"pid", pid},
                        {"tid", tid},
                        {"ts", start_us},
                        {"dur", end_us - start_us},
                        {"args",
                         {{"outcome", t.outcome},
                          {"compile_ms", t.compile_ms},
                          {"build_ms", t.build_ms},
                          {"boosted", t.boosted},
                          {"idle_priority", t.idle_priority},
                          {"thread_id", t.thread.thread_id},
                          {"cpu_start", t.thread.cpu_start},
                          {"cpu_end", t.thread.cpu_end}}}});
      // What the compile cost its thread, where known (Linux): a trace viewer shows it in the
      // slice's arguments.
      nlohmann::json& args = events.back()["args"];
      const ThreadAccounting& used = t.thread.used;
      if (used.on_cpu_ns) args["on_cpu_ms"] = static_cast<double>(*used.on_cpu_ns) / 1e6;
      if (used.system_ns) args["system_ms"] = static_cast<double>(*used.system_ns) / 1e6;
      if (used.run_delay_ns) args["run_delay_ms"] = static_cast<double>(*used.run_delay_ns) / 1e6;
      if (used.minor_faults) args["minor_faults"] = *used.minor_faults;
      if (used.involuntary_switches) args["switches_involuntary"] = *used.involuntary_switches;
    }
    for (const auto& [tid, name] : lanes)
      events.push_back({{"ph", "M"},
                        {"pid", pid},
                        {"tid", tid},
                        {"name", "thread_name"},
                        {"args", {{"name", name}}}});
  }
  std::string sched_slices;
  if (timeline.sched_recorded) add_sched_lanes(s, timeline, events, sched_slices);
  nlohmann::json other = {{"scenario", s.name}, {"clock", "poll (CLOCK_MONOTONIC_RAW), µs"}};
  if (meta.contains("device")) other["device"] = meta["device"];
  // The object's keys in the order the DOM would write them, the events last so that the
  // record's slices follow the rest as text. The record's lanes put their names in `events`
  // before any slice, so each slice's leading comma has an event before it.
  std::string out =
      "{\"displayTimeUnit\":\"ns\",\"otherData\":" + dump(other) + ",\"traceEvents\":[";
  for (std::size_t i = 0; i < events.size(); ++i) {
    if (i) out += ',';
    out += dump(events[i]);
  }
  out += sched_slices;
  out += "]}\n";
  return out;
}

}  // namespace gpuoverlap
