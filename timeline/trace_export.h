// The Chrome trace-event format (JSON object form) that Perfetto (ui.perfetto.dev) and
// chrome://tracing open: a process per queue, a thread (track) per workload, one complete
// slice ("X") per frame from the poll start to the poll end, flow events ("s"/"f") from each
// producer's slice to its consumer's, frames laid end to end on the frames' t0 axis.
// Background work gets its own process once it exists.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "timeline/records.h"

namespace gpuoverlap {

struct Scenario;

// The trace's JSON text, ending in a newline. Contract: `meta` is the scenario's meta.json (its
// device goes into the trace's metadata).
std::string chrome_trace(const Scenario& scenario, const ScenarioTimeline& timeline,
                         const nlohmann::json& meta);

}  // namespace gpuoverlap
