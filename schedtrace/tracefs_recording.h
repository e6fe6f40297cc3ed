// Taking the kernel's scheduling record (sched_record.h) from tracefs: a trace instance of its
// own (so that it never disturbs another tracer), the mono_raw clock (the clock the tool stamps
// with: CLOCK_MONOTONIC_RAW), record-tgid on, and only the events the attribution reads; read
// back in the kernel's binary form (raw_record.h).
//
// Where it cannot be taken (not Linux, not root, tracefs not mountable, a kernel without an
// event), unavailable_reason says why in one line and the run goes on without it.
//
// Instances are kept for the life of the process and reused. Creating one allocates its buffer
// (buffer_size_kb on every CPU: 256 MB on a 16-CPU machine at 16 MB) and removing it frees that
// again, which made each scenario of the main job about 0.14 s longer on a 16-CPU GPU machine
// (docs/sched-trace.md). A kept instance whose record was read to its end is empty and is only
// turned on again; one whose read failed or never came is cleared (its `trace` file truncated,
// which waits for an RCU grace period, about 30 ms) before the next record. They are removed at
// exit; instances that a killed run of the tool left behind (gpuoverlap-<pid>-<n> of a process that
// is gone) are removed when the first is made.
//
// Hazard: start and stop write to tracefs (system calls of the calling thread) and stop reads
// the whole buffer: call them outside measured frames, never inside.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/result.h"
#include "schedtrace/raw_record.h"

namespace gpuoverlap {

// The tracefs mount point: GPUOVERLAP_TRACEFS where set (tests point it at a folder without
// tracefs to check the path where the record cannot be taken), else /sys/kernel/tracing.
std::string tracefs_root();

// Why the record cannot be taken here; "" when it can. Mounts tracefs where it is not mounted
// and the process may.
std::string sched_trace_unavailable_reason();

// A record as read: every CPU's pages, the formats that say how to read them, the kernel's
// thread-to-process map and names, and how many events each CPU's buffer overwrote (its
// per_cpu stats' overrun).
struct SchedTraceData {
  std::vector<RawCpuPages> cpus;
  std::shared_ptr<const RawFormats> formats;
  std::unordered_map<std::int32_t, std::int32_t> tgid_of;
  std::unordered_map<std::int32_t, std::string> name_of;
  std::map<std::int32_t, std::int64_t> overrun_by_cpu;  // only CPUs that overwrote some

  std::size_t bytes() const;
  std::vector<std::int32_t> overrun_cpus() const;
  // parse_raw_record; a CPU's lost events are the larger of what its pages say and its
  // overrun (a full page has no room to say how many it lost).
  SchedRecord parse() const;
};

class TracefsRecording {
 public:
  // Takes a kept instance with this buffer size, cleared, or creates one (gpuoverlap-<pid>-<n>)
  // and sets it up; then turns it on. The buffer is per CPU. Several records may run at once
  // (scenarios on several devices), each in an instance of its own.
  static Result<TracefsRecording> start(std::uint32_t buffer_kb_per_cpu);
  TracefsRecording(TracefsRecording&& other) noexcept;
  TracefsRecording& operator=(TracefsRecording&&) = delete;
  TracefsRecording(const TracefsRecording&) = delete;
  ~TracefsRecording();  // turns the instance off and keeps it for the next, if stop() did not

  // Turns the record off, reads it (each CPU's trace_pipe_raw, the kernel's saved_tgids) and
  // keeps the instance for the next record. An error when a read fails: a record cut short
  // would look like a quiet machine.
  Result<SchedTraceData> stop();

  // How start() got its instance: "new" (created and set up), "kept, drained" (reused as the
  // last record left it, read to its end) or "kept, cleared" (its `trace` truncated, which waits
  // for an RCU grace period): meta.json's sched_trace.instance, beside cost_ms.start.
  const std::string& instance() const { return instance_; }

 private:
  TracefsRecording(std::string dir, std::uint32_t buffer_kb_per_cpu)
      : dir_(std::move(dir)), buffer_kb_per_cpu_(buffer_kb_per_cpu) {}
  std::string dir_;  // empty once given back
  std::uint32_t buffer_kb_per_cpu_ = 0;
  // Each CPU's overrun count when this record began (a kept instance's go on counting).
  std::map<std::int32_t, std::int64_t> overrun_at_start_;
  std::string instance_ = "new";
};

// The trace instances this process has made and keeps (for tests: the pool's reuse).
std::size_t tracefs_instances_made();

// Whether thread `tid` is a kernel thread: its /proc/<tid>/cmdline is empty (where it still
// exists), else by its name (thread_waits.h).
bool is_kernel_thread_now(std::int32_t tid, const std::string& comm);

}  // namespace gpuoverlap
