// What the viewer's window shows, a part per view: the run (one scenario on a timeline with
// its panes), the study verdict, A/B compare, live, a run on several devices, and the history
// of `view --db`. Internal to viewer/: window.cpp loads it, the panels draw it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "analysis/compare.h"
#include "analysis/results.h"
#include "layout/timeline_layout.h"
#include "live/live_edits.h"
#include "viewer/history_scene.h"
#include "viewer/scene.h"

namespace gpuoverlap::viewer {

class LiveFeed;

// A/B: the second folder, its timeline of the scenario shown, and `compare` of the two.
struct CompareView {
  std::filesystem::path directory;
  LoadedRun run;
  std::optional<layout::TimelineInput> input;  // nullopt: the scenario is not in it
  std::optional<CompareResult> result;
  Clock compared_on = Clock::poll;
  layout::TimelineLayout drawn;  // B's timeline as last drawn, for the sidecar
};

// `view --db DB`: the history as read when the window opened, the series chosen, and what was
// last drawn (in window pixels, for the screenshot's sidecar and for clicks).
struct HistoryView {
  HistoryData data;
  RunsScene runs;
  std::vector<std::vector<bool>> present;  // per row and mark: its folder, when the view opened
  history::SeriesKey choice;
  SeriesMenus menus;
  std::optional<TrendScene> trend;
  std::string message;  // a folder no longer present, or one that could not be opened
  std::optional<std::filesystem::path> open_pending;  // a mark clicked: opened after the frame
  RunsLayout runs_drawn;
  TrendLayout trend_drawn;
  bool shown = true;  // false while a run's folder is shown
};

// `run --live`: following the newest frame, and the experiment controls' save.
struct LiveView {
  bool follow = true;    // show the newest frame as it arrives
  bool auto_fit = true;  // following: fit each new frame until the user zooms or pans
  std::string status;    // frames so far, running or ended
  // Live edits: the file "save as TOML" writes, and what became of the last save.
  std::array<char, 512> save_path{"scenario.toml"};
  live::LiveEdits::Outcome save_outcome;
};

// A run on several devices (scene.h, run_devices): its devices, and the scenario shown as a
// band per device, one above the other. Empty for any other folder, live, and with a second
// folder (A/B shows one device's scenario against B's).
struct DevicesView {
  std::vector<RunDevice> list;
  std::vector<DeviceBand> bands;
  nlohmann::json drawn = nlohmann::json::array();  // each band as drawn, for the sidecar
};

// A study's verdict.csv beside the scenario shown, and how its forest plot is drawn.
struct StudyView {
  std::optional<StudyVerdictTable> verdict;
  std::string error;                // an unreadable verdict.csv, shown where the table would be
  bool forest_diagnostics = false;  // the forest plot with the diagnostics that moved
};

// What the window shows; every change of scenario, clock or frame rebuilds what is drawn.
struct ViewState {
  // The run: the scenario shown, its clock and frame, and what its panes show.
  LoadedRun run;
  std::size_t scenario = 0;
  std::vector<std::uint32_t> frames;
  std::vector<Clock> clocks;
  Clock clock = Clock::poll;
  bool medians = true;
  int frame_index = 0;
  layout::TimelineInput input;
  layout::View view;
  bool fit_pending = true;
  std::vector<FrameSpan> spans;
  // What a player feels (analysis/results.h, FrameTimeStats), the report's line; empty where
  // no frame has an interval (a preemption scenario, results older than frames.csv).
  std::string frame_time;
  std::vector<std::string> device;
  std::vector<OverlapCell> overlap;
  OverlapGrid overlap_cells;                 // the same pairs as a grid
  std::optional<PreemptionGrid> preemption;  // a preemption scenario: it and its neighbours
  std::optional<std::size_t> open_next;      // a grid cell clicked: the scenario to show next
  nlohmann::json grids_drawn = nlohmann::json::object();  // what the grids drew, for the sidecar
  UrgentLatencies latencies;                              // a preemption scenario's urgent jobs
  // The scenario list as drawn (scene.h, scenario_tree), rebuilt when the run's list changes.
  std::vector<ScenarioTreeNode> tree;
  std::size_t tree_of = 0;  // the number of scenarios it was built from

  StudyView study;
  LiveView live;
  std::optional<CompareView> compare;  // A/B: the second folder
  std::optional<HistoryView> history;  // `view --db`: the history, and the run opened from it
  DevicesView devices;
};

// The series chosen in the history's menus: its menus and its trend.
void choose_series(HistoryView& h);

// The frame the controls ask for; nullopt: the medians.
std::optional<std::uint32_t> frame_asked(const ViewState& state);

// Whether the timeline shows scenario `index`: the one chosen, or the same on another device.
bool shown_in_timeline(const ViewState& state, std::size_t index);

// The scenario list as a tree, rebuilt when the run's list of scenarios changed.
void refresh_tree(ViewState& state);

// Shows scenario `index` on `clock` where it has it (else ts, else poll); rebuild() follows.
void select_scenario(ViewState& state, std::size_t index, std::optional<Clock> clock);

// Rebuilds what is drawn from the scenario, clock and frame chosen.
void rebuild(ViewState& state);

// Live: takes the feed's newest snapshot, keeping the scenario shown (or, following, moving
// to the newest scenario and its newest frame).
void take_snapshot(ViewState& state, const LiveFeed& feed, std::uint64_t& version,
                   std::optional<Clock> clock);

}  // namespace gpuoverlap::viewer
