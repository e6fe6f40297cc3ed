#include "workloads/workload.h"

namespace gpuoverlap {

std::string_view to_string(WorkloadKind kind) { return name_of(kWorkloadKindNames, kind); }

std::optional<WorkloadKind> parse_workload_kind(std::string_view text) {
  return value_of(kWorkloadKindNames, text);
}

}  // namespace gpuoverlap
