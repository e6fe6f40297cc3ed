// What the engine's loops need from a backend for one scenario whose device objects exist.
// The frame loop (engine/frame_loop.h): record and submit a frame, release its gate, wait for
// it with a deadline, read its timestamps. The preemption loop (engine/preemption_loop.h):
// submit to the load and urgent streams, poll and wait for them, read their timestamps. Both:
// the stamps, calibration, device facts. Everything else (the stamps' polling, warm-up,
// background modes, cadence, load sizing, record assembly, status classification, deadline
// diagnosis, calibration drift) is the loops', written once for every API.
//
// Contracts of every method: called from the loop's thread only; no method blocks past the
// deadline it is given (or, where none is given, past the time an API call takes); a GPU
// timeout or device loss is a GpuOutcome, never an exception.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "engine/device_facts.h"
#include "queues/queue_model.h"
#include "scenarios/preemption_spec.h"
#include "timeline/clock_conversion.h"

namespace gpuoverlap {

namespace background {
class BackgroundSession;
}
struct Scenario;

// What a submission or a wait on the GPU came to.
enum class GpuStatus {
  ok,           // submitted; or the frame completed on every queue
  timeout,      // the deadline passed first
  device_lost,  // the device is gone: nothing further can run on it
  failed,       // another API failure (the Error says which)
};

struct GpuOutcome {
  GpuStatus status = GpuStatus::ok;
  std::optional<Error> error;  // set unless ok; carries the API's code

  static GpuOutcome ok() { return {}; }
};

// "<what> failed: <the API's code name>" (its message where the code has no name), keeping
// the code: how a failed submission or wait reads in a run's failure.
inline Error failure_of(const GpuOutcome& outcome, const std::string& what) {
  if (!outcome.error) return make_error(what + " failed");
  const Error& e = *outcome.error;
  return Error{what + " failed: " + (e.api_code_name.empty() ? e.message : e.api_code_name),
               e.api_code, e.api_code_name};
}

// The stamp memory as the CPU sees it: one slot per workload, at `slot(w)`. The slot layout is
// the shaders' (workloads/perlin.hlsl): start frame, end frame, then the shader clock at the
// start (lo, hi) and at the end (lo, hi). The slots need not lie in one buffer: a backend
// whose copies stamp with another command than its shaders' (D3D12's WriteBufferImmediate,
// which writes only a buffer in COPY_DEST) keeps those slots in a buffer of their own.
// Contract: mapped and written with atomic stores only, for as long as the backend lives.
struct StampView {
  std::vector<const std::uint32_t*> slot_words;  // per workload, its slot's first word
  std::size_t slots() const { return slot_words.size(); }
  const std::uint32_t* slot(std::size_t w) const { return slot_words[w]; }
};
// `slots` slots `stride_words` 32-bit words apart from `words`: one buffer holds them all.
inline StampView evenly_spaced_stamps(const std::uint32_t* words, std::size_t stride_words,
                                      std::size_t slots) {
  StampView view;
  for (std::size_t w = 0; w < slots; ++w) view.slot_words.push_back(words + w * stride_words);
  return view;
}
constexpr std::size_t kStampStartFrameWord = 0;
constexpr std::size_t kStampEndFrameWord = 1;
constexpr std::size_t kStampStartClockWord = 2;
constexpr std::size_t kStampEndClockWord = 4;

// A workload's timestamp queries of the frame just waited for, in device ticks.
struct TimestampTicks {
  std::uint64_t start = 0, end = 0;
};

// The two submission streams of a preemption scenario, each on its own queue: the long load
// and the small urgent job.
enum class Stream { load, urgent };

// Parts of a load at most (a graphics-and-compute load has two), so a submission's queries
// are bounded.
constexpr std::size_t kMaxLoadParts = 2;

// What the preemption loop will submit: set once, before the first submission.
struct StreamLayout {
  std::vector<std::size_t> load_parts;  // workload indices of the load's parts (kMaxLoadParts)
  std::optional<std::size_t> urgent;    // the urgent job's workload
  std::uint32_t load_ring = 0;          // submissions of a stream in flight at most
  std::uint32_t urgent_ring = 0;
  bool timestamps = false;  // timestamp queries around every part
};

// One part of a submission: load part `part` (its index in StreamLayout::load_parts; 0 for
// the urgent job) run at `size`.
struct StreamPart {
  std::size_t part = 0;
  std::size_t workload = 0;
  preemption::LoadSize size;
};

// One submission to a stream. Its stamps carry `sequence` (from 1, per stream), and the
// stream's completion counter reaches `sequence` when it completes. `ring` (< the stream's
// ring size) names the command buffer and queries it uses: free once the previous
// submission that used it completed. Each submission first zeroes its parts' counters behind
// everything earlier on its queue, so a stream's submissions run one after the other.
struct StreamSubmission {
  Stream stream = Stream::load;
  std::uint32_t sequence = 0;
  std::uint32_t ring = 0;
  std::vector<StreamPart> parts;
};

class ScenarioBackend {
 public:
  virtual ~ScenarioBackend() = default;

  // The stamps of this scenario (valid while the backend lives).
  virtual StampView stamps() const = 0;

  // Records frame `frame` (counted from 1; stamps start zeroed) so that every queue waits on
  // the gate for that frame before any workload starts. Nothing runs yet.
  virtual Status record_frame(std::uint32_t frame) = 0;
  // Submits what record_frame recorded. Work waits on the gate: the GPU is idle until
  // release_gate.
  virtual GpuOutcome submit_frame(std::uint32_t frame) = 0;
  // Lets frame `frame` start on every queue at once (the CPU signals the gate).
  virtual GpuOutcome release_gate(std::uint32_t frame) = 0;
  // Waits until every queue completed `frame`, or until `deadline_ns` (CLOCK_MONOTONIC_RAW).
  virtual GpuOutcome wait_frame(std::uint32_t frame, std::int64_t deadline_ns) = 0;

  // The timestamp queries of the frame last waited for, per workload; nullopt where the
  // workload's pair is unavailable (timestamps off or unsupported on its queue). An empty
  // vector: the read failed as a whole.
  virtual std::vector<std::optional<TimestampTicks>> read_timestamps() = 0;
  // One CPU/GPU clock pairing, the best of a few samples; nullopt when the device has none.
  virtual std::optional<GpuCalibration> calibrate() = 0;

  // The API's code for a missed deadline (VK_TIMEOUT), for a frame whose stamps missed it
  // although its queues completed.
  virtual Error timeout_error() const = 0;

  // The scenario's background work, or nullptr without a [background] table. Owned by the
  // backend, because its variants become the backend's pipelines.
  virtual background::BackgroundSession* background() = 0;
  // From the next record_frame on, compute workload `workload` runs `variant` (a pipeline of
  // this backend's background session, still owned by the backend) instead of its build-time
  // pipeline; 0: the build-time pipeline again. Ignored for a workload that is not compute.
  virtual void bind_compute_variant(std::size_t workload, std::uint64_t variant) = 0;
  // Makes this backend, whose last run ended with every frame waited for, serve `scenario`,
  // whose foreground is the one it was opened for (the same frame plan, settings and variant
  // binding; engine/device_executor.h decides): the old background session is stopped, its
  // variants destroyed and unbound, and `scenario`'s background session (if any) takes its
  // place. Nothing else changes: the device, queues, memory and pipelines stay, which is
  // the point (a study's conditions then share whatever state a device opening lands in).
  // Contract: `scenario` outlives the backend's next run.
  virtual Status replace_background(const Scenario& scenario) = 0;
  // The highest frame number submitted so far; 0 for a new backend. A run on a reused backend
  // numbers its frames after it: the backend's semaphores only count up, and its stamps still
  // hold the last run's frame numbers.
  virtual std::uint32_t last_frame() const = 0;
  // Set when work of this scenario may still run on the GPU (a loop's outcome says so):
  // from then on the backend frees nothing the GPU may still use, now or when destroyed.
  virtual void set_gpu_may_be_busy() = 0;
  // A run on this backend failed: its device may be in any state, so no later scenario may
  // run on it (where the backend keeps idle devices, this one is destroyed, not kept).
  virtual void discard_device() {}

  // The device, its queues (as mapped, with the priorities granted) and clocks: complete once
  // the backend is open, unchanged after. The loops read them and write them into meta.json
  // (engine/device_facts.h), adding their own keys (background, calibration drift, the shader
  // clock's verification).
  virtual const ScenarioDeviceFacts& facts() const = 0;

  // --- preemption scenarios ----------------------------------------------------------------
  // Creates the command rings, completion counters and queries of both streams.
  virtual Status prepare_streams(const StreamLayout& layout) = 0;
  // Records one submission (see StreamSubmission) into its ring's command buffer; nothing
  // runs yet.
  virtual Status record_stream(const StreamSubmission& submission) = 0;
  // Submits what record_stream recorded for it. Only the submission itself happens here: the
  // loop times it, and an urgent job's latency counts from just before it.
  virtual GpuOutcome submit_stream(const StreamSubmission& submission) = 0;
  // The stream's completion counter now, without waiting.
  virtual GpuOutcome stream_completed(Stream stream, std::uint64_t& completed) = 0;
  // Waits until the stream's counter reaches `sequence`, or until `deadline_ns`.
  virtual GpuOutcome wait_stream(Stream stream, std::uint64_t sequence,
                                 std::int64_t deadline_ns) = 0;
  // The timestamps of the completed submission at `ring`, per part (by StreamPart::part, for
  // `parts` parts); nullopt where a pair is unavailable.
  virtual std::vector<std::optional<TimestampTicks>> read_stream_timestamps(Stream stream,
                                                                            std::uint32_t ring,
                                                                            std::size_t parts) = 0;
};

}  // namespace gpuoverlap
