// `gpuoverlap report`: one Markdown page with everything about a run (device, queues,
// priorities, clocks, per-workload timing tables, dependency gaps, plots and traces), the page
// someone attaches to a bug.
#pragma once

#include <string>

#include "analysis/results.h"

namespace gpuoverlap {

// Links (plots, traces) are relative to the results directory, where report.md is written.
std::string markdown_report(const LoadedRun& run);

}  // namespace gpuoverlap
