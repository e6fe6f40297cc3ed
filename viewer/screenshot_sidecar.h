// `--screenshot`: the PNG of the window and its sidecar, FILE.layout.json, which says what was
// drawn where (in the PNG's pixels): a run's timeline, lanes, bars and arrows, its grids and
// panes, or the history's window. Internal to viewer/; the tests read the sidecar
// (tests/integration/viewer_test.cpp).
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/result.h"
#include "layout/timeline_layout.h"
#include "viewer/view_state.h"

namespace gpuoverlap::viewer {

// A timeline as drawn (window pixels), for the sidecar: its lanes, bars and arrows, each bar
// and arrow naming its workloads.
nlohmann::json timeline_json(const layout::TimelineInput& input,
                             const layout::TimelineLayout& drawn);

// The sidecar of a run's window; `drawn` is the timeline draw_ui returned.
nlohmann::json layout_json(const ViewState& state, const layout::TimelineLayout& drawn, int width,
                           int height);

// The sidecar of the history's window (`view --db`).
nlohmann::json history_json(const HistoryView& h, int width, int height);

// Reads the window's back buffer into `path` (a PNG) and writes the sidecar beside it.
Status write_screenshot(const std::filesystem::path& path, const nlohmann::json& sidecar, int width,
                        int height);

}  // namespace gpuoverlap::viewer
