#include "timeline/records.h"

namespace gpuoverlap {

std::string_view to_string(RecordStatus status) {
  switch (status) {
    case RecordStatus::ok:
      return "ok";
    case RecordStatus::timeout:
      return "timeout";
    case RecordStatus::device_lost:
      return "device_lost";
    case RecordStatus::gpu_error:
      return "gpu_error";
  }
  return "gpu_error";
}

}  // namespace gpuoverlap
