// What a workload is, independent of any API: a compute dispatch or a full-screen draw that
// runs `groups` x 1024 threads (pixels), each doing `iterations` 4-D Perlin noise evaluations,
// or a copy of `bytes` from an upload buffer into its output buffer (or, a readback, of another
// workload's output into a readback buffer).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "core/enum_names.h"

namespace gpuoverlap {

enum class WorkloadKind { compute, graphics, copy };
inline constexpr EnumNames<WorkloadKind, 3> kWorkloadKindNames{
    {{WorkloadKind::compute, "compute"},
     {WorkloadKind::graphics, "graphics"},
     {WorkloadKind::copy, "copy"}}};

std::string_view to_string(WorkloadKind kind);
std::optional<WorkloadKind> parse_workload_kind(std::string_view text);

inline constexpr std::uint32_t kThreadsPerGroupUnit = 1024;    // one "group" of the scenario
inline constexpr std::uint32_t kThreadsPerDispatchGroup = 64;  // numthreads in the shader
inline constexpr std::uint32_t kRenderTargetWidth = 1024;      // graphics: 1024 x groups pixels
// PushConstants::producers bit: cs_main stores into its texture binding, a thread per pixel.
inline constexpr std::uint32_t kWritesTexture = 0x100;

// Limits enforced by scenario validation. A dispatch runs at most 65535 workgroups in X (D3D12's
// limit and Vulkan's guaranteed maxComputeWorkGroupCount), so a compute workload has at most
// 4095 groups of 1024 threads; a draw's groups are its rows, at most the guaranteed 4096 height;
// iterations cap a single workload at seconds, not hours.
inline constexpr std::uint32_t kMaxDispatchWorkgroupsX = 65535;
inline constexpr std::uint32_t kMaxComputeGroups =
    kMaxDispatchWorkgroupsX * kThreadsPerDispatchGroup / kThreadsPerGroupUnit;
inline constexpr std::uint32_t kMaxGroups = 4096;
inline constexpr std::uint32_t kMaxIterations = 1u << 20;

inline constexpr std::uint32_t thread_count(std::uint32_t groups) {
  return groups * kThreadsPerGroupUnit;
}

// What perlin.hlsl is written for, the same on every backend: the bytes of a workload's stamp
// (and counter) slot the shaders use, the producer outputs a consumer can read per resource
// kind, and the input buffer's float4 elements.
inline constexpr std::uint32_t kSlotBytes = 64;
inline constexpr std::uint32_t kMaxProducerBindings = 4;
inline constexpr std::uint32_t kInputElements = 65536;
// The floats a consumer reads from each producer buffer (perlin.hlsl's kProducerElements).
inline constexpr std::uint32_t kProducerElements = 1024;

// A copy (kind "copy") moves `bytes` from an upload buffer (host-visible, written once) into its
// output buffer, which consumers read as they read a dispatch's; a readback copy instead moves
// the output of the one workload it depends on into a readback buffer that no workload reads
// (scenarios/scenario.h, is_readback). It has no shader to stamp it: the backend writes its
// stamps itself, start before the copy and end after it, each ordered against the copy by an
// execution barrier, so a copy's poll times include those two barriers. An upload's bytes: at
// least what a consumer reads, at most 1 GiB, whole 4-byte words (a readback's: its source's).
inline constexpr std::uint64_t kMinCopyBytes = std::uint64_t{kProducerElements} * 4;
inline constexpr std::uint64_t kMaxCopyBytes = std::uint64_t{1} << 30;
inline constexpr std::uint64_t kDefaultCopyBytes = std::uint64_t{16} << 20;

// perlin.hlsl's Params, word for word: what every backend hands the shaders (Vulkan push
// constants, D3D12 root constants at b0).
struct PerlinParams {
  std::uint32_t frame;         // written into the stamps; never 0
  std::uint32_t slot;          // the workload's stamp slot
  std::uint32_t thread_count;  // threads (compute) or pixels (graphics) that count as finished
  std::uint32_t iterations;
  std::uint32_t width;      // graphics: the render target's width, to number pixels
  std::uint32_t stamping;   // 0: no counters, no stamps
  std::uint32_t producers;  // bits 0-3 producer buffers bound, bits 4-7 producer render targets,
                            // kWritesTexture: a dispatch writes its declared texture
};
static_assert(sizeof(PerlinParams) == 7 * sizeof(std::uint32_t), "perlin.hlsl's Params");

// How many threads (a draw: pixels) a frame workload runs, and the width a draw's pixels are
// numbered by: `groups` x 1024 on a 1024-wide render target of its own, or a texture mip's
// pixels (scenarios/scenario.h, workload_shape).
struct WorkloadShape {
  std::uint32_t threads = 0;
  std::uint32_t width = kRenderTargetWidth;
};
inline constexpr WorkloadShape groups_shape(std::uint32_t groups) {
  return {thread_count(groups), kRenderTargetWidth};
}

// A frame workload of `shape` at `frame` (one draw covers its target).
inline constexpr PerlinParams frame_params(std::uint32_t slot, WorkloadShape shape,
                                           std::uint32_t iterations, std::uint32_t frame,
                                           bool stamping, std::uint32_t producers) {
  return {frame, slot, shape.threads, iterations, shape.width, stamping ? 1u : 0u, producers};
}

// A preemption stream's part, stamped with the submission's sequence and reading no
// producers: `draws` draws of `rows` x 1024 pixels (graphics; every draw's pixels count
// before the part is finished), or a dispatch of `groups` x 1024 threads when draws is 0.
inline constexpr PerlinParams stream_params(std::uint32_t slot, std::uint32_t draws,
                                            std::uint32_t rows, std::uint32_t groups,
                                            std::uint32_t iterations, std::uint32_t sequence) {
  const std::uint32_t threads =
      draws > 0 ? kRenderTargetWidth * rows * draws : thread_count(groups);
  return {sequence, slot, threads, iterations, kRenderTargetWidth, 1u, 0u};
}

}  // namespace gpuoverlap
