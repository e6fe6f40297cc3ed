// What a workload is, independent of any API: a compute dispatch or a full-screen draw that
// runs `groups` x 1024 threads (pixels), each doing `iterations` 4-D Perlin noise evaluations.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "core/enum_names.h"

namespace gpuoverlap {

enum class WorkloadKind { compute, graphics };
inline constexpr EnumNames<WorkloadKind, 2> kWorkloadKindNames{
    {{WorkloadKind::compute, "compute"}, {WorkloadKind::graphics, "graphics"}}};

std::string_view to_string(WorkloadKind kind);
std::optional<WorkloadKind> parse_workload_kind(std::string_view text);

inline constexpr std::uint32_t kThreadsPerGroupUnit = 1024;    // one "group" of the scenario
inline constexpr std::uint32_t kThreadsPerDispatchGroup = 64;  // numthreads in the shader
inline constexpr std::uint32_t kRenderTargetWidth = 1024;      // graphics: 1024 x groups pixels

// Limits enforced by scenario validation. groups <= 4096 keeps a dispatch under Vulkan's
// guaranteed maxComputeWorkGroupCount (65535 x 64 threads) and a render target under the
// guaranteed 4096 height; iterations cap a single workload at seconds, not hours.
inline constexpr std::uint32_t kMaxGroups = 4096;
inline constexpr std::uint32_t kMaxIterations = 1u << 20;

inline constexpr std::uint32_t thread_count(std::uint32_t groups) {
  return groups * kThreadsPerGroupUnit;
}

}  // namespace gpuoverlap
