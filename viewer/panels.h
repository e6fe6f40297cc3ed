// The viewer's panels, one file a panel or a family of them (Tracy's TracyView_*.cpp style),
// and the few helpers they share. Internal to viewer/: each draws a part of ViewState with
// ImGui at the cursor and, where the screenshot's sidecar says what it drew, records it in
// the state (grids_drawn, devices.drawn, compare->drawn, the history's *_drawn).
#pragma once

#include <imgui.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "layout/timeline_layout.h"
#include "viewer/view_state.h"

namespace gpuoverlap::live {
class LiveEdits;
}

namespace gpuoverlap::viewer {

// panels.cpp: what several panels use.
inline ImU32 rgba(int r, int g, int b, int a = 255) { return IM_COL32(r, g, b, a); }
nlohmann::json rect_json(ImVec2 min, ImVec2 max);
// A grid's column labels, each centred above its column (the caller makes each column at
// least as wide as its label).
void column_labels(ImDrawList* draw, ImVec2 origin, float label_px, float cell_px,
                   const std::vector<std::string>& labels);
// The view's one window: the whole viewport, without decoration, never raised over another.
void begin_whole_viewport(const char* name);

// panel_run.cpp: one frame of a run's window (the scenario list, the controls, the timeline
// and the panes below it); returns the timeline as drawn.
layout::TimelineLayout draw_ui(ViewState& state, live::LiveEdits* edits);

// panel_timeline.cpp: the timeline, drawn at the cursor; returns the layout in window pixels
// for the screenshot's sidecar.
layout::TimelineLayout draw_timeline(ViewState& state, const layout::TimelineInput& input,
                                     const char* id, float height_px);

// panel_devices.cpp: a run on several devices, a band per device; returns the chosen
// scenario's band as drawn.
layout::TimelineLayout draw_device_bands(ViewState& state);

// panel_compare.cpp: A/B: both timelines on one time range, then `compare`'s table; returns
// A's timeline as drawn.
layout::TimelineLayout draw_ab_timelines(ViewState& state);
void draw_compare(const ViewState& state);

// panel_overlap.cpp: the dependency gaps, the overlap matrix as a grid and as a table.
void draw_gaps(const ViewState& state);
void draw_overlap(const ViewState& state);
void draw_overlap_grid(ViewState& state);

// panel_preemption.cpp: the preemption matrix and the urgent job's latency.
void draw_preemption_grid(ViewState& state);
void draw_latencies(const ViewState& state);

// panel_study.cpp: a study's verdict: where the time went, the forest plot, the
// dose-response of the positive control, and the verdict table.
void draw_time_accounts(ViewState& state);
void draw_forest(ViewState& state);
void draw_dose_response(ViewState& state);
void draw_verdict(const ViewState& state);

// panel_experiment.cpp: `run --live`'s controls that change the running scenario.
void draw_experiment(ViewState& state, live::LiveEdits& edits);

// panel_history.cpp: `view --db`: the history's window (the runs per machine, then a series'
// trend).
void draw_history(HistoryView& h);

}  // namespace gpuoverlap::viewer
