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

std::optional<double> start_on(const WorkloadFrameRecord& r, std::string_view clock) {
  if (clock == "poll") return r.poll_start_us;
  if (clock == "ts") return r.ts_start_us;
  if (clock == "clk") return r.clk_start_us;
  return std::nullopt;
}

std::optional<double> end_on(const WorkloadFrameRecord& r, std::string_view clock) {
  if (clock == "poll") return r.poll_end_us;
  if (clock == "ts") return r.ts_end_us;
  if (clock == "clk") return r.clk_end_us;
  return std::nullopt;
}

}  // namespace gpuoverlap
