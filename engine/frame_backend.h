// What the frame loop (engine/frame_loop.h) needs from a backend for one scenario whose device
// objects exist: record and submit a frame, release its gate, wait for it with a deadline,
// read its timestamps, calibrate the clocks. Everything else of a frame (the stamps' polling,
// warm-up, background modes, record assembly, status classification, deadline diagnosis,
// calibration drift) is the loop's, written once for every API.
//
// Contracts of every method: called from the loop's thread only; no method blocks past the
// deadline it is given (or, where none is given, past the time an API call takes); a GPU
// timeout or device loss is a GpuOutcome, never an exception.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "core/result.h"
#include "timeline/clock_conversion.h"

namespace gpuoverlap {

namespace background {
class BackgroundSession;
}

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

// The stamp memory as the CPU sees it: one slot per workload, `stride_words` 32-bit words
// apart. The slot layout is the shaders' (workloads/perlin.hlsl): start frame, end frame, then
// the shader clock at the start (lo, hi) and at the end (lo, hi). Contract: mapped and written
// with atomic stores only, for as long as the backend lives.
struct StampView {
  const std::uint32_t* words = nullptr;
  std::size_t stride_words = 0;
  std::size_t slots = 0;
};
constexpr std::size_t kStampStartFrameWord = 0;
constexpr std::size_t kStampEndFrameWord = 1;
constexpr std::size_t kStampStartClockWord = 2;
constexpr std::size_t kStampEndClockWord = 4;

// A workload's timestamp queries of the frame just waited for, in device ticks.
struct TimestampTicks {
  std::uint64_t start = 0, end = 0;
};

class FrameBackend {
 public:
  virtual ~FrameBackend() = default;

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
  // Valid bits of the timestamps of workload `workload`'s queue (0: no timestamps there).
  virtual std::uint32_t timestamp_valid_bits(std::size_t workload) const = 0;
  // One CPU/GPU clock pairing, the best of a few samples; nullopt when the device has none.
  virtual std::optional<GpuCalibration> calibrate() = 0;
  // The stamps carry the device's shader clock (in timestamp ticks, to be verified).
  virtual bool shader_clock_enabled() const = 0;

  // The API's code for a missed deadline (VK_TIMEOUT), for a frame whose stamps missed it
  // although its queues completed.
  virtual Error timeout_error() const = 0;

  // The scenario's background work, or nullptr without a [background] table. Owned by the
  // backend, because its variants become the backend's pipelines.
  virtual background::BackgroundSession* background() = 0;
  // What the backend reports of the device, queues and clocks for meta.json; the loop adds
  // its own keys (background, calibration drift, the shader clock's verification).
  virtual nlohmann::json device_meta() const = 0;
};

}  // namespace gpuoverlap
