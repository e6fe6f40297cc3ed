// Taking the kernel's scheduling record (sched_record.h) from tracefs: a trace instance of its
// own (so that it never disturbs another tracer), the mono_raw clock (the clock the tool stamps
// with: CLOCK_MONOTONIC_RAW), record-tgid on, and only the events the attribution reads.
//
// Where it cannot be taken (not Linux, not root, tracefs not mountable, a kernel without an
// event), unavailable_reason says why in one line and the run goes on without it.
//
// Hazard: start and stop write to tracefs (system calls of the calling thread) and stop reads
// the whole buffer: call them outside measured frames, never inside.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"

namespace gpuoverlap {

// The tracefs mount point: GPUOVERLAP_TRACEFS where set (tests point it at a folder without
// tracefs to check the path where the record cannot be taken), else /sys/kernel/tracing.
std::string tracefs_root();

// Why the record cannot be taken here; "" when it can. Mounts tracefs where it is not mounted
// and the process may.
std::string sched_trace_unavailable_reason();

struct SchedTraceText {
  std::string text;                        // the instance's `trace` file
  std::vector<std::int32_t> overrun_cpus;  // CPUs whose buffer overwrote events
};

class TracefsRecording {
 public:
  // Creates the instance `name` (an old one of that name is removed first), sets it up and
  // turns it on. The buffer is per CPU.
  static Result<TracefsRecording> start(const std::string& name, std::uint32_t buffer_kb_per_cpu);
  TracefsRecording(TracefsRecording&& other) noexcept;
  TracefsRecording& operator=(TracefsRecording&&) = delete;
  TracefsRecording(const TracefsRecording&) = delete;
  ~TracefsRecording();  // turns the instance off and removes it, if stop() did not

  // Turns the record off, reads it and removes the instance.
  Result<SchedTraceText> stop();

 private:
  explicit TracefsRecording(std::string dir) : dir_(std::move(dir)) {}
  std::string dir_;  // empty once removed
};

// Whether thread `tid` is a kernel thread: its /proc/<tid>/cmdline is empty (where it still
// exists), else by its name (thread_waits.h).
bool is_kernel_thread_now(std::int32_t tid, const std::string& comm);

}  // namespace gpuoverlap
