// The kernel's scheduling record of one frame scenario (run --sched-trace), taken around its
// frames and attached to its timeline: frames.csv's sched_* columns, sched_waits.csv (every
// off-CPU stretch of the frame loop, the workers and the poller in the measured frames) and
// meta.json's sched_trace (whether it was recorded and why not, what it lost, and the frame
// loop's waits in one sentence).
//
// Hazard: starting and stopping the record are system calls and a read of the whole buffer;
// SchedTraceScope does both outside the frames (before the first, after the last).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "schedtrace/sched_record.h"
#include "schedtrace/tracefs_recording.h"
#include "timeline/records.h"

namespace gpuoverlap {

// The threads whose waits are explained.
struct ForegroundThreads {
  std::int64_t frame_loop = 0;
  std::int64_t poller = 0;  // 0: none (no stamping)
  std::vector<std::int64_t> workers;
};

// The per-CPU buffer of the record: a lavapipe game frame writes about 0.5 MB a second per CPU;
// an overrun is reported (meta.json sched_trace.overrun_cpus), never hidden.
inline constexpr std::uint32_t kSchedTraceBufferKbPerCpu = 16384;

// The record of one scenario's measured frames: started before the first, stopped after the
// last. While any scope of the process records (another device's frames in a concurrent run),
// attach() keeps its work to its own thread; otherwise it renders and compresses the record's
// text on up to kSchedTraceTextThreads threads of its CPUs, as no frame is measured then.
inline constexpr std::size_t kSchedTraceTextThreads = 8;
class SchedTraceScope {
 public:
  // Starts the record when `wanted`; where it cannot be, keeps why.
  explicit SchedTraceScope(bool wanted);
  ~SchedTraceScope();
  SchedTraceScope(const SchedTraceScope&) = delete;
  SchedTraceScope& operator=(const SchedTraceScope&) = delete;
  // Stops the record (after the last frame: the rest of the scenario's teardown is not in it).
  void stop();
  // Attaches what the record explains to `timeline`, whose frames and meta are complete;
  // without a record, meta.json's sched_trace says why.
  void attach(ScenarioTimeline& timeline, const ForegroundThreads& threads);

 private:
  void end_recording();
  bool wanted_ = false;
  bool recording_counted_ = false;  // counted among the scopes recording now
  std::optional<TracefsRecording> recording_;
  std::optional<SchedTraceData> data_;
  std::string why_not_;
  double start_ms_ = 0;   // taking and turning on its instance, before the first frame
  double read_ms_ = 0;    // stopping the record and reading its pages
  std::string instance_;  // TracefsRecording::instance()
};

// Of the frame loop's waits behind background threads, grouped by the way it lost its CPU and
// got it back ("after it yielded, until the next tick": lost_phrase, back_phrase), the way that
// cost most in all. One definition for a scenario's sentence and a study condition's line.
struct CostliestWay {
  std::string way;
  double total_ms = 0;
  std::size_t times = 0;
  double p50_ms = 0;
};
std::optional<CostliestWay> costliest_way(
    const std::map<std::string, std::vector<double>>& ms_by_way);
// "mostly after it yielded, until the next tick (7.9 ms, 140 times, p50 3.90 ms)"
std::string describe(const CostliestWay& way);

// What finish does with a parsed record, for tests: fills the frames' sched_* columns,
// timeline.sched_waits and timeline.meta["sched_trace"]. `process_tgid` is the measured
// process; `overrun_cpus` the CPUs whose buffer overwrote events.
void attach_sched_record(ScenarioTimeline& timeline, const SchedRecord& record,
                         const ForegroundThreads& threads, std::int32_t process_tgid,
                         const std::vector<std::int32_t>& overrun_cpus);

}  // namespace gpuoverlap
