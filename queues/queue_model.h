// The scenario's view of queues, in D3D12 terms (DirectX-Headers types). API neutral: the
// executors translate these; nothing here touches a GPU.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/enum_names.h"
#include "d3d12_types.h"

namespace gpuoverlap {

enum class QueueType { direct, compute };
enum class QueuePriority { normal, high, realtime };
inline constexpr EnumNames<QueueType, 2> kQueueTypeNames{
    {{QueueType::direct, "direct"}, {QueueType::compute, "compute"}}};
inline constexpr EnumNames<QueuePriority, 3> kQueuePriorityNames{
    {{QueuePriority::normal, "normal"},
     {QueuePriority::high, "high"},
     {QueuePriority::realtime, "realtime"}}};

std::string_view to_string(QueueType type);
std::string_view to_string(QueuePriority priority);
std::optional<QueueType> parse_queue_type(std::string_view text);
std::optional<QueuePriority> parse_queue_priority(std::string_view text);

D3D12_COMMAND_LIST_TYPE to_d3d12(QueueType type);
D3D12_COMMAND_QUEUE_PRIORITY to_d3d12(QueuePriority priority);

}  // namespace gpuoverlap
