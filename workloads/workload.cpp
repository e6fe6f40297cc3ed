#include "workloads/workload.h"

namespace gpuoverlap {

std::string_view to_string(WorkloadKind kind) {
  return kind == WorkloadKind::compute ? "compute" : "graphics";
}

std::optional<WorkloadKind> parse_workload_kind(std::string_view text) {
  if (text == "compute") return WorkloadKind::compute;
  if (text == "graphics") return WorkloadKind::graphics;
  return std::nullopt;
}

}  // namespace gpuoverlap
