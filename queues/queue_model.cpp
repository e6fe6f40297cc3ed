#include "queues/queue_model.h"

namespace gpuoverlap {

std::string_view to_string(QueueType type) { return name_of(kQueueTypeNames, type); }

std::string_view to_string(QueuePriority priority) {
  return name_of(kQueuePriorityNames, priority);
}

std::optional<QueueType> parse_queue_type(std::string_view text) {
  return value_of(kQueueTypeNames, text);
}

std::optional<QueuePriority> parse_queue_priority(std::string_view text) {
  return value_of(kQueuePriorityNames, text);
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
