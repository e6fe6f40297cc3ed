#include "queues/queue_model.h"

namespace gpuoverlap {

std::string_view to_string(QueueType type) {
  return type == QueueType::direct ? "direct" : "compute";
}

std::string_view to_string(QueuePriority priority) {
  switch (priority) {
    case QueuePriority::normal:
      return "normal";
    case QueuePriority::high:
      return "high";
    case QueuePriority::realtime:
      return "realtime";
  }
  return "normal";
}

std::optional<QueueType> parse_queue_type(std::string_view text) {
  if (text == "direct") return QueueType::direct;
  if (text == "compute") return QueueType::compute;
  return std::nullopt;
}

std::optional<QueuePriority> parse_queue_priority(std::string_view text) {
  if (text == "normal") return QueuePriority::normal;
  if (text == "high") return QueuePriority::high;
  if (text == "realtime") return QueuePriority::realtime;
  return std::nullopt;
}

D3D12_COMMAND_LIST_TYPE to_d3d12(QueueType type) {
  return type == QueueType::direct ? D3D12_COMMAND_LIST_TYPE_DIRECT
                                   : D3D12_COMMAND_LIST_TYPE_COMPUTE;
}

D3D12_COMMAND_QUEUE_PRIORITY to_d3d12(QueuePriority priority) {
  switch (priority) {
    case QueuePriority::normal:
      return D3D12_COMMAND_QUEUE_PRIORITY_NORMAL;
    case QueuePriority::high:
      return D3D12_COMMAND_QUEUE_PRIORITY_HIGH;
    case QueuePriority::realtime:
      return D3D12_COMMAND_QUEUE_PRIORITY_GLOBAL_REALTIME;
  }
  return D3D12_COMMAND_QUEUE_PRIORITY_NORMAL;
}

}  // namespace gpuoverlap
