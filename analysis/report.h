// `gpuoverlap report`: a run as two Markdown pages. report.md answers first (the five
// questions, answers.h), then the device and one table per family: the studies (conditions ×
// primary endpoints), the preemption scenarios (one row per cell), the barriers (one row per
// dependency) and the other scenarios (one row each). report-details.md has every scenario's
// own section (queues, priorities, clocks, timing tables per clock, dependency gaps, plots,
// traces), study rounds and matrix cells included: the page someone attaches to a bug.
#pragma once

#include <string>

#include "analysis/results.h"

namespace gpuoverlap {

struct ReportPages {
  std::string page;     // report.md
  std::string details;  // report-details.md
};
// Links (plots, traces, each other) are relative to the results directory, where both pages
// are written.
// `details_name` is the details page's file name, for report.md's links to it.
ReportPages markdown_report(const LoadedRun& run,
                            const std::string& details_name = "report-details.md");

}  // namespace gpuoverlap
