#include "viewer/window.h"

#define GLFW_INCLUDE_NONE
#include <GL/gl.h>
#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>  // ImGui's own backends (libimgui-dev), not ours
#include <backends/imgui_impl_opengl3.h>
#include <fmt/format.h>
#include <imgui.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>

#include "analysis/compare.h"
#include "core/atomic_file.h"
#include "live/live_edits.h"
#include "timeline/statistics.h"
#include "viewer/history_scene.h"
#include "viewer/live_feed.h"
#include "viewer/png_image.h"
#include "viewer/scene.h"

namespace gpuoverlap::viewer {

namespace {

std::string glfw_error;  // the last GLFW error, for the one line that says why

void on_glfw_error(int, const char* description) { glfw_error = description ? description : "?"; }

// A/B: the second folder, its timeline of the scenario shown, and `compare` of the two.
struct SecondFolder {
  std::filesystem::path directory;
  LoadedRun run;
  std::optional<layout::TimelineInput> input;  // nullopt: the scenario is not in it
  std::optional<CompareResult> compare;
  Clock compared_on = Clock::poll;
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

void choose_series(HistoryView& h) {
  h.menus = series_menus(h.data.series, h.choice);
  const history::Series* s = find_series(h.data.series, h.choice);
  h.trend = s ? std::optional<TrendScene>(trend_scene(*s)) : std::nullopt;
}

// What the window shows; every change of scenario, clock or frame rebuilds what is drawn.
struct ViewState {
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
  bool forest_diagnostics = false;           // the forest plot with the diagnostics that moved
  nlohmann::json grids_drawn = nlohmann::json::object();  // what the grids drew, for the sidecar
  std::optional<StudyVerdictTable> verdict;
  std::string verdict_error;  // an unreadable verdict.csv, shown where the table would be
  bool follow = true;         // live: show the newest frame as it arrives
  bool auto_fit = true;       // live, following: fit each new frame until the user zooms or pans
  std::string live_status;    // live: frames so far, running or ended
  std::optional<SecondFolder> second;
  UrgentLatencies latencies;            // a preemption scenario's urgent jobs
  layout::TimelineLayout second_drawn;  // B's timeline as last drawn, for the sidecar
  // Live edits: the file "save as TOML" writes, and what became of the last save.
  std::array<char, 512> save_path{"scenario.toml"};
  live::LiveEdits::Outcome save_outcome;
  // The scenario list as drawn (scene.h, scenario_tree), rebuilt when the run's list changes.
  std::vector<ScenarioTreeNode> tree;
  std::size_t tree_of = 0;             // the number of scenarios it was built from
  std::optional<HistoryView> history;  // `view --db`: the history, and the run opened from it
  // A run on several devices (scene.h, run_devices): its devices, and the scenario shown as a
  // band per device, one above the other. Empty for any other folder, live, and with a second
  // folder (A/B shows one device's scenario against B's).
  std::vector<RunDevice> devices;
  std::vector<DeviceBand> bands;
  nlohmann::json bands_drawn = nlohmann::json::array();  // each band as drawn, for the sidecar
};

// The frame the controls ask for; nullopt: the medians.
std::optional<std::uint32_t> frame_asked(const ViewState& state) {
  if (state.medians || state.frames.empty()) return std::nullopt;
  return state.frames[static_cast<std::size_t>(state.frame_index)];
}

// Whether the timeline shows scenario `index`: the one chosen, or the same on another device.
bool shown_in_timeline(const ViewState& state, std::size_t index) {
  if (index == state.scenario) return true;
  return std::any_of(state.bands.begin(), state.bands.end(),
                     [&](const DeviceBand& band) { return band.scenario == index; });
}

void refresh_tree(ViewState& state) {
  if (state.tree_of == state.run.scenarios.size() && !state.tree.empty()) return;
  std::vector<std::string> names;
  for (const LoadedScenario& sc : state.run.scenarios) names.push_back(sc.name);
  state.tree = scenario_tree(names);
  state.tree_of = names.size();
}

// The tree for the sidecar; a leaf the timeline shows (on any device) is marked "shown".
nlohmann::json tree_json(const ViewState& state, const std::vector<ScenarioTreeNode>& nodes) {
  nlohmann::json out = nlohmann::json::array();
  for (const ScenarioTreeNode& n : nodes) {
    nlohmann::json node = {{"label", n.label}};
    if (n.scenario) {
      node["scenario"] = *n.scenario;
      if (shown_in_timeline(state, *n.scenario)) node["shown"] = true;
    }
    if (!n.children.empty()) node["children"] = tree_json(state, n.children);
    out.push_back(node);
  }
  return out;
}

void select_scenario(ViewState& state, std::size_t index, std::optional<Clock> clock) {
  state.scenario = index;
  const LoadedScenario& s = state.run.scenarios[index];
  state.frames = frame_numbers(s);
  state.clocks = available_clocks(s);
  const bool has_ts =
      std::find(state.clocks.begin(), state.clocks.end(), Clock::ts) != state.clocks.end();
  // A clock this scenario has no value on (a grid cell opened from another) falls back too.
  const bool has_clock =
      clock && std::find(state.clocks.begin(), state.clocks.end(), *clock) != state.clocks.end();
  state.clock = has_clock ? *clock : has_ts ? Clock::ts : Clock::poll;
  state.frame_index =
      std::min(state.frame_index, std::max(0, static_cast<int>(state.frames.size()) - 1));
  state.device = device_lines(s.meta);
  state.fit_pending = true;
}

void rebuild(ViewState& state) {
  const LoadedScenario& s = state.run.scenarios[state.scenario];
  const std::optional<std::uint32_t> frame = frame_asked(state);
  state.input = timeline_input(s, state.clock, frame);
  state.bands = device_bands(state.run, state.devices, state.scenario, state.clock, frame);
  if (state.second) {
    SecondFolder& b = *state.second;
    b.input.reset();
    for (const LoadedScenario& other : b.run.scenarios)
      if (other.name == s.name) {
        // The same frame where B has it, else B's medians.
        const auto frames = frame_numbers(other);
        const bool has = frame && std::find(frames.begin(), frames.end(), *frame) != frames.end();
        b.input = timeline_input(other, state.clock, has ? frame : std::nullopt);
      }
    if (!b.compare || b.compared_on != state.clock) {
      CompareOptions options;
      options.clock = state.clock;
      b.compare = compare_runs(state.run, b.run, options);
      b.compared_on = state.clock;
    }
  }
  state.spans = frame_spans(s, state.clock);
  const std::optional<FrameTimeStats> frame_time = frame_time_stats(s.frames);
  state.frame_time = frame_time ? "Frame time " + describe(*frame_time) : std::string();
  // A preemption scenario's records are per submission, each from its own submit: the same
  // number on the load and the urgent job is not the same moment, so no overlap matrix.
  const bool preemption = s.kind == ScenarioKind::preemption;
  state.overlap = preemption ? std::vector<OverlapCell>{} : overlap_matrix(s, state.clock);
  state.overlap_cells = overlap_grid(s.workloads, state.overlap);
  state.preemption = preemption_grid(state.run, state.scenario, state.clock);
  state.latencies = urgent_latencies(s, state.clock);
  if (state.fit_pending) {
    const double width = state.view.width_px;
    state.view = state.bands.empty() ? layout::fit(state.input, state.view)
                                     : fit_bands(state.bands, state.view);
    state.view.width_px = width;
    state.fit_pending = false;
  }
  state.verdict.reset();
  state.verdict_error.clear();
  if (s.directory.empty()) return;  // live: no folder, no study verdict yet
  if (auto verdict = study_verdict(state.run.directory, s); !verdict)
    state.verdict_error = verdict.error().message;
  else
    state.verdict = std::move(*verdict);
}

// Live: takes the feed's newest snapshot, keeping the scenario shown (or, following, moving
// to the newest scenario and its newest frame).
void take_snapshot(ViewState& state, const LiveFeed& feed, std::uint64_t& version,
                   std::optional<Clock> clock) {
  auto snapshot = feed.snapshot(version);
  if (!snapshot) return;
  const std::string shown =
      state.run.scenarios.empty() ? "" : state.run.scenarios[state.scenario].name;
  state.run = std::move(*snapshot);
  state.live_status = fmt::format("live: {} frames measured, {}", feed.frames(),
                                  feed.finished() ? "the run has ended" : "running");
  if (state.run.scenarios.empty()) return;
  std::size_t index = state.run.scenarios.size() - 1;
  if (!state.follow)
    for (std::size_t i = 0; i < state.run.scenarios.size(); ++i)
      if (state.run.scenarios[i].name == shown) index = i;
  const bool moved = state.run.scenarios[index].name != shown;
  const Clock keep = state.clock;
  const bool fit = state.fit_pending;
  select_scenario(state, index, moved ? clock : std::optional<Clock>(keep));
  state.fit_pending = fit || moved || (state.follow && state.auto_fit);
  if (state.follow && !state.frames.empty()) {
    state.medians = false;
    state.frame_index = static_cast<int>(state.frames.size()) - 1;
  }
  rebuild(state);
}

ImU32 rgba(int r, int g, int b, int a = 255) { return IM_COL32(r, g, b, a); }

constexpr int kComputeRgb[3] = {70, 130, 220};
constexpr int kGraphicsRgb[3] = {235, 150, 50};

// The timeline, drawn at the cursor; returns the layout in window pixels for the screenshot's
// sidecar.
layout::TimelineLayout draw_timeline(ViewState& state, const layout::TimelineInput& input,
                                     const char* id, float height_px) {
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float width = std::max(200.0f, ImGui::GetContentRegionAvail().x);
  state.view.width_px = width;
  layout::TimelineLayout layout = layout::layout_timeline(input, state.view);
  const float canvas_height = std::max(height_px, static_cast<float>(layout.height_px) + 4);
  ImGui::InvisibleButton(id, ImVec2(width, canvas_height));
  // Zoom around the mouse with the wheel, pan by dragging.
  if (ImGui::IsItemHovered()) {
    const float wheel = ImGui::GetIO().MouseWheel;
    const double axis0 = state.view.label_width_px, axis1 = state.view.width_px;
    const double mouse_x = ImGui::GetIO().MousePos.x - origin.x;
    if (wheel != 0 && mouse_x > axis0) {
      const double span = state.view.end_us - state.view.begin_us;
      const double at = state.view.begin_us + (mouse_x - axis0) / (axis1 - axis0) * span;
      const double factor = std::pow(0.8, wheel);
      state.auto_fit = false;
      state.view.begin_us = at - (at - state.view.begin_us) * factor;
      state.view.end_us = at + (state.view.end_us - at) * factor;
    }
  }
  if (ImGui::IsItemActive() && ImGui::IsMouseDragging(ImGuiMouseButton_Left)) {
    state.auto_fit = false;
    const double span = state.view.end_us - state.view.begin_us;
    const double shift =
        -ImGui::GetIO().MouseDelta.x / (state.view.width_px - state.view.label_width_px) * span;
    state.view.begin_us += shift;
    state.view.end_us += shift;
  }
  auto at = [&](double x, double y) {
    return ImVec2(origin.x + static_cast<float>(x), origin.y + static_cast<float>(y));
  };
  draw->AddRectFilled(origin, ImVec2(origin.x + width, origin.y + canvas_height), rgba(24, 26, 30));
  draw->PushClipRect(origin, ImVec2(origin.x + width, origin.y + canvas_height), true);
  for (const layout::LaneBox& lane : layout.lanes) {
    const ImU32 fill = lane.queue_header ? rgba(48, 52, 60)
                                         : (lane.index % 2 ? rgba(32, 34, 40) : rgba(28, 30, 35));
    draw->AddRectFilled(at(lane.rect.x0, lane.rect.y0), at(lane.rect.x1, lane.rect.y1), fill);
    draw->AddText(at(lane.rect.x0 + 4, lane.rect.y0 + 3), rgba(220, 220, 220), lane.label.c_str());
  }
  for (const layout::Tick& tick : layout.ticks) {
    draw->AddLine(at(tick.x, state.view.axis_height_px - 4), at(tick.x, layout.height_px),
                  rgba(70, 74, 82));
    draw->AddText(at(tick.x + 2, 2), rgba(200, 200, 200), tick.label.c_str());
  }
  for (const layout::Whisker& w : layout.whiskers) {
    draw->AddLine(at(w.x0, w.y), at(w.x1, w.y), rgba(180, 180, 180), 1.0f);
    draw->AddLine(at(w.x0, w.y - 5), at(w.x0, w.y + 5), rgba(180, 180, 180));
    draw->AddLine(at(w.x1, w.y - 5), at(w.x1, w.y + 5), rgba(180, 180, 180));
  }
  for (const layout::Bar& bar : layout.bars) {
    static constexpr int kBackgroundRgb[3] = {120, 120, 135};  // CPU work, not the GPU's
    const int* rgb = input.workloads[bar.workload].background ? kBackgroundRgb
                     : bar.graphics                           ? kGraphicsRgb
                                                              : kComputeRgb;
    draw->AddRectFilled(at(bar.rect.x0, bar.rect.y0), at(bar.rect.x1, bar.rect.y1),
                        rgba(rgb[0], rgb[1], rgb[2]));
    if (bar.flagged)  // outside the bar, so its fill stays the kind's colour
      draw->AddRect(at(bar.rect.x0 - 2, bar.rect.y0 - 2), at(bar.rect.x1 + 2, bar.rect.y1 + 2),
                    rgba(230, 40, 40), 0, 0, 2.0f);
    else if (input.workloads[bar.workload].disturbed)  // a poll stamp seen late: amber
      draw->AddRect(at(bar.rect.x0 - 2, bar.rect.y0 - 2), at(bar.rect.x1 + 2, bar.rect.y1 + 2),
                    rgba(240, 170, 40), 0, 0, 2.0f);
    if (!bar.label.empty())
      draw->AddText(at(bar.rect.x0 + 3, bar.rect.y0 + 2), rgba(255, 255, 255), bar.label.c_str());
  }
  for (const layout::Arrow& arrow : layout.arrows) {
    const ImU32 color = arrow.split ? rgba(120, 220, 120) : rgba(240, 240, 120);
    if (arrow.split) {  // dashed
      const double length = std::hypot(arrow.x1 - arrow.x0, arrow.y1 - arrow.y0);
      for (double d = 0; d < length; d += 8) {
        const double a = d / length, b = std::min(1.0, (d + 4) / length);
        draw->AddLine(
            at(arrow.x0 + (arrow.x1 - arrow.x0) * a, arrow.y0 + (arrow.y1 - arrow.y0) * a),
            at(arrow.x0 + (arrow.x1 - arrow.x0) * b, arrow.y0 + (arrow.y1 - arrow.y0) * b), color,
            1.5f);
      }
    } else {
      draw->AddLine(at(arrow.x0, arrow.y0), at(arrow.x1, arrow.y1), color, 1.5f);
    }
    draw->AddCircleFilled(at(arrow.x1, arrow.y1), 3.5f, color);
  }
  draw->PopClipRect();
  // Hover over a bar: its times, and on the poll clock each stamp's detection window.
  if (ImGui::IsItemHovered()) {
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    for (const layout::Bar& bar : layout.bars) {
      if (mouse.x < origin.x + bar.rect.x0 || mouse.x > origin.x + bar.rect.x1 ||
          mouse.y < origin.y + bar.rect.y0 || mouse.y > origin.y + bar.rect.y1)
        continue;
      const layout::WorkloadTiming& w = input.workloads[bar.workload];
      std::string text =
          fmt::format("{}: {:.3f} to {:.3f} us ({:.3f} us)", w.name, w.start_us.value_or(0),
                      w.end_us.value_or(0), w.end_us.value_or(0) - w.start_us.value_or(0));
      if (w.start_window_us && w.end_window_us)
        text += fmt::format(
            "\nwritten within {:.3f} us before its start and {:.3f} us before its end{}",
            *w.start_window_us, *w.end_window_us,
            w.disturbed ? " (disturbed: the poller lost its CPU around it)" : "");
      if (!w.detail.empty()) text += "\n" + w.detail;
      ImGui::SetTooltip("%s", text.c_str());
    }
  }
  // Into window pixels, for the sidecar.
  for (layout::LaneBox& lane : layout.lanes) {
    lane.rect.x0 += origin.x, lane.rect.x1 += origin.x, lane.rect.y0 += origin.y,
        lane.rect.y1 += origin.y;
  }
  for (layout::Bar& bar : layout.bars) {
    bar.rect.x0 += origin.x, bar.rect.x1 += origin.x, bar.rect.y0 += origin.y,
        bar.rect.y1 += origin.y;
  }
  for (layout::Arrow& a : layout.arrows) {
    a.x0 += origin.x, a.x1 += origin.x, a.y0 += origin.y, a.y1 += origin.y;
  }
  return layout;
}

// A timeline as drawn (window pixels), for the sidecar: its lanes, bars and arrows, each bar
// and arrow naming its workloads.
nlohmann::json timeline_json(const layout::TimelineInput& input,
                             const layout::TimelineLayout& drawn) {
  nlohmann::json bars = nlohmann::json::array(), lanes = nlohmann::json::array(),
                 arrows = nlohmann::json::array();
  auto rect = [](const layout::Rect& r) { return nlohmann::json{r.x0, r.y0, r.x1, r.y1}; };
  for (const layout::Bar& b : drawn.bars)
    bars.push_back({{"workload", input.workloads[b.workload].name},
                    {"rect", rect(b.rect)},
                    {"graphics", b.graphics},
                    {"label", b.label},
                    {"disturbed", input.workloads[b.workload].disturbed},
                    {"background", input.workloads[b.workload].background}});
  for (const layout::LaneBox& l : drawn.lanes)
    lanes.push_back({{"label", l.label}, {"rect", rect(l.rect)}, {"queue_header", l.queue_header}});
  for (const layout::Arrow& a : drawn.arrows)
    arrows.push_back({{"producer", input.workloads[a.producer].name},
                      {"consumer", input.workloads[a.consumer].name},
                      {"from", {a.x0, a.y0}},
                      {"to", {a.x1, a.y1}},
                      {"split", a.split}});
  return {{"lanes", lanes}, {"bars", bars}, {"arrows", arrows}};
}

// A run on several devices: the scenario shown on every device, a band per device one above
// the other on one time range (zoom and pan move them all), each headed by its device's folder
// and name and what it shows. Returns the chosen scenario's band as drawn (the sidecar's
// "bars"); every band goes to `state.bands_drawn` (the sidecar's "devices").
layout::TimelineLayout draw_device_bands(ViewState& state) {
  layout::TimelineLayout chosen;
  state.bands_drawn = nlohmann::json::array();
  const std::optional<std::uint32_t> asked = frame_asked(state);
  const std::string clock(to_string(state.clock));
  const float band_px = state.bands.size() > 1 ? 100 : 240;
  for (std::size_t b = 0; b < state.bands.size(); ++b) {
    const DeviceBand& band = state.bands[b];
    const ImVec2 top = ImGui::GetCursorScreenPos();
    std::string shows;
    if (!band.scenario)
      shows = "this scenario did not run on this device";
    else if (!band.has_clock)
      shows = fmt::format("{}: no value on the {} clock", state.run.scenarios[*band.scenario].name,
                          clock);
    else if (band.frame)
      shows = fmt::format("{}, frame {}", state.run.scenarios[*band.scenario].name, *band.frame);
    else
      shows = fmt::format("{}, medians over all frames{}", state.run.scenarios[*band.scenario].name,
                          asked ? fmt::format(" (it has no frame {})", *asked) : "");
    ImGui::TextColored(
        band.scenario == state.scenario ? ImVec4(1, 0.9f, 0.4f, 1) : ImVec4(0.85f, 0.85f, 0.85f, 1),
        "%s", band.label.c_str());
    ImGui::SameLine();
    ImGui::TextUnformatted(shows.c_str());
    nlohmann::json drawn_json = {{"lanes", nlohmann::json::array()},
                                 {"bars", nlohmann::json::array()},
                                 {"arrows", nlohmann::json::array()}};
    if (band.input) {
      const layout::TimelineLayout drawn =
          draw_timeline(state, *band.input, fmt::format("timeline-{}", b).c_str(), band_px);
      drawn_json = timeline_json(*band.input, drawn);
      if (band.scenario == state.scenario) chosen = drawn;
    }
    const ImVec2 bottom = ImGui::GetItemRectMax();
    drawn_json.update(
        {{"folder", state.devices[band.device].folder},
         {"device", state.devices[band.device].name},
         {"label", band.label},
         {"text", shows},
         {"scenario", band.scenario ? nlohmann::json(state.run.scenarios[*band.scenario].name)
                                    : nlohmann::json(nullptr)},
         {"chosen", band.scenario == state.scenario},
         {"frame", band.frame ? nlohmann::json(*band.frame) : nlohmann::json(nullptr)},
         {"clock", clock},
         {"has_clock", band.has_clock},
         {"rect", {top.x, top.y, bottom.x, bottom.y}}});
    state.bands_drawn.push_back(std::move(drawn_json));
  }
  return chosen;
}

void draw_gaps(const ViewState& state) {
  const LoadedScenario& s = state.run.scenarios[state.scenario];
  if (!ImGui::BeginTable("gaps", 5, ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg)) return;
  for (const char* column : {"consumer", "producer", "barrier", "gap p50 (us)", "gap p95 (us)"})
    ImGui::TableSetupColumn(column);
  ImGui::TableHeadersRow();
  for (const MetricSeries& m : metric_series(s, state.clock)) {
    if (m.metric != "gap" || m.values_us.empty()) continue;
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(m.workload.c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(m.producer.c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(m.barrier.c_str());
    ImGui::TableNextColumn();
    ImGui::Text("%.1f", *percentile(m.values_us, 50));
    ImGui::TableNextColumn();
    ImGui::Text("%.1f", *percentile(m.values_us, 95));
  }
  ImGui::EndTable();
}

void draw_overlap(const ViewState& state) {
  if (!ImGui::BeginTable("overlap", 5, ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg)) return;
  for (const char* column : {"workload", "workload", "frames", "overlapped", "overlap p50 (us)"})
    ImGui::TableSetupColumn(column);
  ImGui::TableHeadersRow();
  for (const OverlapCell& cell : state.overlap) {
    ImGui::TableNextRow();
    if (cell.overlapped > 0)  // pairs that ran at once stand out
      ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg0, rgba(40, 90, 50));
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(cell.a.c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(cell.b.c_str());
    ImGui::TableNextColumn();
    ImGui::Text("%zu", cell.frames);
    ImGui::TableNextColumn();
    ImGui::Text("%zu", cell.overlapped);
    ImGui::TableNextColumn();
    ImGui::Text("%.1f", cell.overlap_p50_us);
  }
  ImGui::EndTable();
}

nlohmann::json rect_json(ImVec2 min, ImVec2 max) { return {min.x, min.y, max.x, max.y}; }

// A grid's column labels, each centred above its column (the caller makes each column at
// least as wide as its label).
void column_labels(ImDrawList* draw, ImVec2 origin, float label_px, float cell_px,
                   const std::vector<std::string>& labels) {
  for (std::size_t c = 0; c < labels.size(); ++c) {
    const float text_px = ImGui::CalcTextSize(labels[c].c_str()).x;
    draw->AddText(
        ImVec2(origin.x + label_px + cell_px * (static_cast<float>(c) + 0.5f) - text_px / 2 - 1,
               origin.y),
        rgba(210, 210, 210), labels[c].c_str());
  }
}

// The overlap matrix as a grid: a row and a column per workload, green by the share of frames
// the pair overlapped; a dependent pair (a barrier orders them) is struck through, and red
// where it overlapped all the same. Hover: the numbers.
void draw_overlap_grid(ViewState& state) {
  const OverlapGrid& grid = state.overlap_cells;
  const std::size_t n = grid.workloads.size();
  // Rows are "k  name", columns k: names as column labels would not fit over their cells.
  std::vector<std::string> rows, columns;
  float label_px = 0;
  for (std::size_t w = 0; w < n; ++w) {
    columns.push_back(std::to_string(w + 1));
    rows.push_back(fmt::format("{:>2}  {}", w + 1, grid.workloads[w]));
    label_px = std::max(label_px, ImGui::CalcTextSize(rows.back().c_str()).x + 10);
  }
  const float cell_px = std::clamp((ImGui::GetContentRegionAvail().x - label_px) /
                                       static_cast<float>(std::max<std::size_t>(n, 1)),
                                   18.0f, 40.0f);
  const float header_px = ImGui::GetTextLineHeight() + 4;
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  column_labels(draw, origin, label_px, cell_px, columns);
  nlohmann::json cells = nlohmann::json::array();
  for (std::size_t i = 0; i < n; ++i) {
    const float y = origin.y + header_px + cell_px * static_cast<float>(i);
    draw->AddText(ImVec2(origin.x, y + cell_px / 2 - ImGui::GetTextLineHeight() / 2),
                  rgba(210, 210, 210), rows[i].c_str());
    for (std::size_t j = 0; j < n; ++j) {
      const ImVec2 min(origin.x + label_px + cell_px * static_cast<float>(j), y);
      const ImVec2 max(min.x + cell_px - 2, min.y + cell_px - 2);
      if (!grid.cells[i][j]) {
        draw->AddRectFilled(min, max, rgba(36, 38, 44));
        continue;
      }
      const OverlapCell& cell = state.overlap[*grid.cells[i][j]];
      const double share = cell.frames ? static_cast<double>(cell.overlapped) / cell.frames : 0.0;
      draw->AddRectFilled(
          min, max,
          rgba(30 + static_cast<int>(40 * share), 40 + static_cast<int>(150 * share),
               45 + static_cast<int>(45 * share)));
      if (cell.dependent) {
        draw->AddLine(min, max, cell.overlapped ? rgba(240, 60, 60) : rgba(150, 150, 150), 1.5f);
        if (cell.overlapped) draw->AddRect(min, max, rgba(240, 60, 60), 0, 0, 2.0f);
      }
      ImGui::SetCursorScreenPos(min);
      ImGui::PushID(static_cast<int>(i * n + j));
      ImGui::InvisibleButton("cell", ImVec2(cell_px - 2, cell_px - 2));
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip("%s and %s: overlapped in %zu of %zu frames, p50 %.1f us%s",
                          cell.a.c_str(), cell.b.c_str(), cell.overlapped, cell.frames,
                          cell.overlap_p50_us,
                          cell.dependent ? " (dependent: a barrier orders them)" : "");
      ImGui::PopID();
      if (i < j)
        cells.push_back({{"a", cell.a},
                         {"b", cell.b},
                         {"frames", cell.frames},
                         {"overlapped", cell.overlapped},
                         {"share", share},
                         {"dependent", cell.dependent},
                         {"rect", rect_json(min, max)}});
    }
  }
  ImGui::SetCursorScreenPos(
      ImVec2(origin.x, origin.y + header_px + cell_px * static_cast<float>(n) + 4));
  ImGui::Dummy(ImVec2(1, 1));
  state.grids_drawn["overlap_grid"] = {{"workloads", grid.workloads}, {"cells", cells}};
}

// Log scale from green (the fastest cell) to red (the slowest).
ImU32 latency_colour(double value_us, double low_us, double high_us) {
  const double t =
      high_us > low_us && low_us > 0 && value_us > 0
          ? std::clamp(std::log(value_us / low_us) / std::log(high_us / low_us), 0.0, 1.0)
          : 0.0;
  return rgba(50 + static_cast<int>(160 * t), 140 - static_cast<int>(90 * t),
              70 - static_cast<int>(20 * t));
}

// The preemption scenarios beside the one shown as a grid of load × priority (and process),
// coloured by the urgent job's p99 on a log scale; the one shown is outlined, a click opens
// another. A cell with misses of the period says how many.
void draw_preemption_grid(ViewState& state) {
  const PreemptionGrid& grid = *state.preemption;
  double low = 0, high = 0;
  for (const PreemptionGridCell& c : grid.entries)
    if (c.p99_us && *c.p99_us > 0) {
      low = low > 0 ? std::min(low, *c.p99_us) : *c.p99_us;
      high = std::max(high, *c.p99_us);
    }
  ImGui::Text(
      "%s: the urgent job's p99 on %s, from its submit to its first thread (log colour "
      "%.0f to %.0f us); click a cell to open it",
      grid.group.empty() ? "preemption presets" : grid.group.c_str(),
      std::string(to_string(grid.clock)).c_str(), low, high);
  float label_px = 0;
  for (const std::string& l : grid.loads)
    label_px = std::max(label_px, ImGui::CalcTextSize(l.c_str()).x + 8);
  float cell_w = 120;
  for (const std::string& c : grid.columns)
    cell_w = std::max(cell_w, ImGui::CalcTextSize(c.c_str()).x + 12);
  const float line = ImGui::GetTextLineHeight();
  const float cell_h = 2 * line + 8, header_px = line + 4;
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  column_labels(draw, origin, label_px, cell_w, grid.columns);
  nlohmann::json cells = nlohmann::json::array();
  for (std::size_t l = 0; l < grid.loads.size(); ++l) {
    const float y = origin.y + header_px + cell_h * static_cast<float>(l);
    draw->AddText(ImVec2(origin.x, y + cell_h / 2 - line / 2), rgba(210, 210, 210),
                  grid.loads[l].c_str());
    for (std::size_t c = 0; c < grid.columns.size(); ++c) {
      if (!grid.cells[l][c]) continue;
      const PreemptionGridCell& cell = grid.entries[*grid.cells[l][c]];
      const ImVec2 min(origin.x + label_px + cell_w * static_cast<float>(c), y);
      const ImVec2 max(min.x + cell_w - 3, min.y + cell_h - 3);
      const bool shown = cell.scenario == state.scenario;
      draw->AddRectFilled(min, max,
                          cell.p99_us ? latency_colour(*cell.p99_us, low, high) : rgba(60, 60, 66));
      if (shown) draw->AddRect(min, max, rgba(250, 230, 90), 0, 0, 3.0f);
      const std::string first =
          cell.p99_us ? fmt::format("p99 {:.0f} us", *cell.p99_us) : std::string("no start");
      const std::string second = cell.misses
                                     ? fmt::format("{} late of {}", cell.misses, cell.submissions)
                                     : fmt::format("p50 {:.0f} us", cell.p50_us.value_or(0));
      draw->AddText(ImVec2(min.x + 4, min.y + 3), rgba(255, 255, 255), first.c_str());
      draw->AddText(ImVec2(min.x + 4, min.y + 3 + line), rgba(235, 235, 235), second.c_str());
      ImGui::SetCursorScreenPos(min);
      ImGui::PushID(static_cast<int>(cell.scenario));
      if (ImGui::InvisibleButton("cell", ImVec2(cell_w - 3, cell_h - 3)) && !shown)
        state.open_next = cell.scenario;
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "%s\n%zu urgent jobs, p50 %.1f us, p99 %.1f us, %zu later than the "
            "%.1f ms period",
            state.run.scenarios[cell.scenario].name.c_str(), cell.submissions,
            cell.p50_us.value_or(0), cell.p99_us.value_or(0), cell.misses, cell.period_us / 1000.0);
      ImGui::PopID();
      auto number = [](const std::optional<double>& v) {
        return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
      };
      cells.push_back({{"scenario", state.run.scenarios[cell.scenario].name},
                       {"load", grid.loads[l]},
                       {"column", grid.columns[c]},
                       {"submissions", cell.submissions},
                       {"misses", cell.misses},
                       {"p50_us", number(cell.p50_us)},
                       {"p99_us", number(cell.p99_us)},
                       {"shown", shown},
                       {"rect", rect_json(min, max)}});
    }
  }
  ImGui::SetCursorScreenPos(
      ImVec2(origin.x, origin.y + header_px + cell_h * static_cast<float>(grid.loads.size()) + 4));
  ImGui::Dummy(ImVec2(1, 1));
  state.grids_drawn["preemption_grid"] = {{"group", grid.group},
                                          {"clock", to_string(grid.clock)},
                                          {"loads", grid.loads},
                                          {"columns", grid.columns},
                                          {"cells", cells}};
}

// What a verdict.csv row says, for the screen and the sidecar ("?" where it named none).
std::string decision_text(std::optional<Decision> decision) {
  return decision ? std::string(to_string(*decision)) : std::string("?");
}

ImU32 verdict_colour(std::optional<Decision> decision, bool primary) {
  if (!primary) return rgba(150, 150, 150);
  if (decision == Decision::intrusive) return rgba(230, 80, 70);
  if (decision == Decision::non_intrusive) return rgba(90, 200, 110);
  return rgba(230, 190, 80);  // inconclusive
}

// A value axis drawn over [px0, px1] (x or y) for values in [low, high], linear or log.
struct Axis {
  float px0 = 0, px1 = 1;
  double low = 0, high = 1;
  bool log_scale = false;
  double fraction(double v) const {
    return log_scale ? std::log(std::max(v, 1e-12) / low) / std::log(high / low)
                     : (v - low) / (high - low);
  }
  bool outside(double v) const { return fraction(v) < 0 || fraction(v) > 1; }
  float at(double v) const {
    return px0 + static_cast<float>(std::clamp(fraction(v), 0.0, 1.0)) * (px1 - px0);
  }
};

// The range that holds `values` and the margin band, widened a little; on a log axis only
// values above zero count.
Axis axis_over(const std::vector<double>& values, double band_low, double band_high,
               bool log_scale) {
  Axis axis{0, 1, band_low, band_high, log_scale};
  for (double v : values)
    if (std::isfinite(v) && (!log_scale || v > 0))
      axis.low = std::min(axis.low, v), axis.high = std::max(axis.high, v);
  if (log_scale) {
    axis.low /= 1.03, axis.high *= 1.03;
  } else {
    const double pad = 0.05 * (axis.high - axis.low);
    axis.low -= pad, axis.high += pad;
  }
  return axis;
}

// One effect with its interval at height y; a value beyond the axis is drawn at its edge as
// an arrow head pointing out. Returns the point's x, or nullopt where there is no value.
std::optional<float> draw_effect(ImDrawList* draw, const Axis& axis, float y,
                                 const std::optional<double>& value,
                                 const std::optional<double>& interval_low,
                                 const std::optional<double>& interval_high, ImU32 colour) {
  if (!value) return std::nullopt;
  draw->AddLine(ImVec2(axis.at(interval_low.value_or(*value)), y),
                ImVec2(axis.at(interval_high.value_or(*value)), y), colour, 2.0f);
  const float x = axis.at(*value);
  if (axis.outside(*value)) {
    const float out = axis.fraction(*value) > 1 ? 1.0f : -1.0f;
    draw->AddTriangleFilled(ImVec2(x + 6 * out, y), ImVec2(x, y - 5), ImVec2(x, y + 5), colour);
  } else {
    draw->AddCircleFilled(ImVec2(x, y), 4.0f, colour);
  }
  return x;
}

// The margin band and the no-effect line of one forest panel, its frame and its title.
void draw_panel(ImDrawList* draw, const Axis& axis, float title_y, float top, float bottom,
                double band_low, double band_high, double no_effect, const std::string& title) {
  draw->AddRectFilled(ImVec2(axis.at(band_low), top), ImVec2(axis.at(band_high), bottom),
                      rgba(60, 110, 70, 90));
  draw->AddLine(ImVec2(axis.at(no_effect), top), ImVec2(axis.at(no_effect), bottom),
                rgba(200, 200, 200), 1.0f);
  draw->AddRect(ImVec2(axis.px0 - 4, top), ImVec2(axis.px1 + 4, bottom), rgba(90, 94, 102));
  draw->PushClipRect(ImVec2(axis.px0, title_y), ImVec2(axis.px1, top), true);
  draw->AddText(ImVec2(axis.px0, title_y), rgba(210, 210, 210), title.c_str());
  draw->PopClipRect();
}

// A study's forest plot: per endpoint and condition, the median's ratio to the baseline (log
// axis, left) and the tail's excess (points of frames, right), each with its interval against
// the margin band; primary endpoints coloured by their decision, and with the box ticked the
// diagnostics that moved, in grey (they never decide).
void draw_forest(ViewState& state) {
  const StudyVerdictTable& table = *state.verdict;
  ImGui::Checkbox("with the diagnostics that moved", &state.forest_diagnostics);
  const std::vector<std::size_t> rows = forest_rows(table, state.forest_diagnostics);
  if (rows.empty()) return;
  std::vector<double> ratios, tails;  // the primary endpoints set the scales
  for (std::size_t i : rows) {
    const VerdictRow& r = table.rows[i];
    if (r.role != EndpointRole::primary) continue;
    for (const auto& v : {r.ratio_p50, r.ci_low, r.ci_high})
      if (v && tests_median(r.tests)) ratios.push_back(*v);
    for (const auto& v : {r.tail_excess, r.tail_ci_low, r.tail_ci_high})
      if (v && tests_tail(r.tests)) tails.push_back(*v);
  }
  Axis median = axis_over(ratios, 1 - 2 * table.p50_margin, 1 + 2 * table.p50_margin, true);
  Axis tail = axis_over(tails, -2 * table.tail_margin, 2 * table.tail_margin, false);
  auto label_of = [](const VerdictRow& r) {
    return r.metric + " · " + r.condition +
           ((r.role == EndpointRole::primary) ? "" : " (diagnostic)");
  };
  float label_px = 0;
  for (std::size_t i : rows)
    label_px = std::max(label_px, ImGui::CalcTextSize(label_of(table.rows[i]).c_str()).x + 10);
  const float line = ImGui::GetTextLineHeight();
  const float row_h = line + 4, width = ImGui::GetContentRegionAvail().x, gap_px = 48;
  const float panel = std::max(120.0f, (width - label_px - gap_px - 8) / 2);
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float top = origin.y + line + 6, bottom = top + row_h * static_cast<float>(rows.size());
  median.px0 = origin.x + label_px + 4, median.px1 = median.px0 + panel;
  tail.px0 = median.px1 + gap_px, tail.px1 = tail.px0 + panel;
  draw_panel(draw, median, origin.y, top, bottom, 1 - table.p50_margin, 1 + table.p50_margin, 1.0,
             fmt::format("median ratio, log {:.3g} to {:.3g}; band ±{:.0f} %", median.low,
                         median.high, 100 * table.p50_margin));
  draw_panel(draw, tail, origin.y, top, bottom, -table.tail_margin, table.tail_margin, 0.0,
             fmt::format("tail excess, points {:+.1f} to {:+.1f}; band ±{:.1f}", 100 * tail.low,
                         100 * tail.high, 100 * table.tail_margin));
  nlohmann::json drawn = nlohmann::json::array();
  std::string previous_metric;
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const VerdictRow& r = table.rows[rows[k]];
    const float y = top + row_h * (static_cast<float>(k) + 0.5f);
    if (k > 0 && r.metric != previous_metric)  // endpoints apart
      draw->AddLine(ImVec2(origin.x, y - row_h / 2), ImVec2(tail.px1, y - row_h / 2),
                    rgba(70, 74, 82));
    previous_metric = r.metric;
    const ImU32 colour = verdict_colour(r.decision, r.role == EndpointRole::primary);
    draw->AddText(ImVec2(origin.x, y - line / 2), colour, label_of(r).c_str());
    const auto median_x = tests_median(r.tests) ? draw_effect(draw, median, y, r.ratio_p50,
                                                              r.ci_low, r.ci_high, colour)
                                                : std::nullopt;
    const auto tail_x = tests_tail(r.tests) ? draw_effect(draw, tail, y, r.tail_excess,
                                                          r.tail_ci_low, r.tail_ci_high, colour)
                                            : std::nullopt;
    auto x_json = [](const std::optional<float>& x) {
      return x ? nlohmann::json(*x) : nlohmann::json(nullptr);
    };
    drawn.push_back({{"condition", r.condition},
                     {"metric", r.metric},
                     {"primary", r.role == EndpointRole::primary},
                     {"verdict", decision_text(r.decision)},
                     {"y", y},
                     {"median_x", x_json(median_x)},
                     {"tail_x", x_json(tail_x)}});
  }
  ImGui::Dummy(ImVec2(width, bottom - origin.y + 6));
  state.grids_drawn["forest"] = {{"rows", drawn},
                                 {"diagnostics", state.forest_diagnostics},
                                 {"median_axis", {median.px0, median.px1, median.low, median.high}},
                                 {"tail_axis", {tail.px0, tail.px1, tail.low, tail.high}}};
}

// Where each condition's frame time went (analysis/time_account.h), a line per condition.
void draw_time_accounts(ViewState& state) {
  const StudyVerdictTable& table = *state.verdict;
  if (table.time_accounts.empty()) return;
  ImGui::TextUnformatted("Where the time went, against the baseline:");
  nlohmann::json drawn = nlohmann::json::array();
  for (const auto& [condition, line] : table.time_accounts) {
    ImGui::TextWrapped("%s: %s", condition.c_str(), line.c_str());
    drawn.push_back({{"condition", condition}, {"line", line}});
  }
  state.grids_drawn["time_accounts"] = drawn;
}

// The positive control's dose-response: each primary endpoint's median ratio (log) against the
// control's threads (log 2), with its interval; a filled point is a dose detected. The legend
// is beside the plot, never on it.
void draw_dose_response(ViewState& state) {
  const StudyVerdictTable& table = *state.verdict;
  const std::vector<DoseSeries> series = dose_response(table);
  if (series.empty()) return;
  std::vector<double> ratios;
  for (const DoseSeries& d : series)
    for (const auto& [threads, row] : d.points)
      for (const auto& v :
           {table.rows[row].ratio_p50, table.rows[row].ci_low, table.rows[row].ci_high})
        if (v) ratios.push_back(*v);
  ImGui::Text(
      "The positive control: the median ratio of each primary endpoint against the "
      "control's normal-priority threads%s",
      table.detected_from_threads
          ? fmt::format(" (detected from {} thread{})", *table.detected_from_threads,
                        *table.detected_from_threads == 1 ? "" : "s")
                .c_str()
          : " (not detected)");
  const float line = ImGui::GetTextLineHeight();
  float legend_px = 0;
  for (const DoseSeries& d : series)
    legend_px = std::max(legend_px, ImGui::CalcTextSize(d.metric.c_str()).x + 24);
  const float width = std::min(ImGui::GetContentRegionAvail().x, 760.0f), height = 200;
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  Axis y = axis_over(ratios, 1 - 2 * table.p50_margin, 1 + 2 * table.p50_margin, true);
  y.px0 = origin.y + height - line - 6, y.px1 = origin.y + 4;  // upwards
  const Axis x{origin.x + 60, origin.x + width - legend_px - 20,
               static_cast<double>(table.doses.front().threads),
               static_cast<double>(table.doses.back().threads), true};
  draw->AddRect(ImVec2(x.px0 - 6, y.px1), ImVec2(x.px1 + 6, y.px0), rgba(90, 94, 102));
  draw->AddRectFilled(ImVec2(x.px0 - 6, y.at(1 + table.p50_margin)),
                      ImVec2(x.px1 + 6, y.at(1 - table.p50_margin)), rgba(60, 110, 70, 90));
  for (double tick : {y.low, 1.0, y.high})
    draw->AddText(ImVec2(origin.x, y.at(tick) - line / 2), rgba(200, 200, 200),
                  fmt::format("{:.4g}", tick).c_str());
  for (const StudyDose& dose : table.doses)
    draw->AddText(ImVec2(x.at(dose.threads) - 4, y.px0 + 3), rgba(200, 200, 200),
                  std::to_string(dose.threads).c_str());
  static constexpr int kPalette[][3] = {{90, 160, 230},  {240, 150, 60}, {120, 200, 120},
                                        {220, 100, 180}, {200, 200, 90}, {150, 120, 230}};
  nlohmann::json drawn = nlohmann::json::array();
  for (std::size_t m = 0; m < series.size(); ++m) {
    const int* rgb = kPalette[m % std::size(kPalette)];
    const ImU32 colour = rgba(rgb[0], rgb[1], rgb[2]);
    std::optional<ImVec2> previous;
    nlohmann::json points = nlohmann::json::array();
    for (const auto& [threads, row] : series[m].points) {
      const VerdictRow& r = table.rows[row];
      if (!r.ratio_p50) continue;
      const ImVec2 at(x.at(threads), y.at(*r.ratio_p50));
      draw->AddLine(ImVec2(at.x, y.at(r.ci_low.value_or(*r.ratio_p50))),
                    ImVec2(at.x, y.at(r.ci_high.value_or(*r.ratio_p50))), colour, 1.5f);
      if (previous) draw->AddLine(*previous, at, colour, 1.0f);
      if (r.decision == Decision::intrusive)
        draw->AddCircleFilled(at, 4.5f, colour);
      else
        draw->AddCircle(at, 4.5f, colour, 0, 1.5f);
      previous = at;
      points.push_back(
          {{"threads", threads}, {"ratio_p50", *r.ratio_p50}, {"x", at.x}, {"y", at.y}});
    }
    const ImVec2 key(x.px1 + 20, y.px1 + (line + 4) * static_cast<float>(m));
    draw->AddLine(ImVec2(key.x, key.y + line / 2), ImVec2(key.x + 14, key.y + line / 2), colour,
                  2.0f);
    draw->AddText(ImVec2(key.x + 18, key.y), colour, series[m].metric.c_str());
    drawn.push_back({{"metric", series[m].metric}, {"points", points}});
  }
  ImGui::Dummy(ImVec2(width, height));
  state.grids_drawn["dose_response"] = drawn;
}

void draw_verdict(const ViewState& state) {
  if (!state.verdict_error.empty()) {
    ImGui::TextColored(ImVec4(1, 0.4f, 0.4f, 1), "%s", state.verdict_error.c_str());
    return;
  }
  if (!state.verdict) return;
  ImGui::TextUnformatted(state.verdict->file.string().c_str());
  if (!ImGui::BeginTable("verdict", 6, ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg)) return;
  for (const char* column :
       {"condition", "metric", "median ratio [bounds]", "tail excess", "verdict", "pairing"})
    ImGui::TableSetupColumn(column);
  ImGui::TableHeadersRow();
  auto number = [](const std::optional<double>& v, const char* format) {
    return v ? fmt::format(fmt::runtime(format), *v) : std::string("-");
  };
  for (const VerdictRow& row : state.verdict->rows) {
    ImGui::TableNextRow();
    if (row.decision == Decision::intrusive)
      ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg0, rgba(110, 40, 40));
    else if (row.decision == Decision::non_intrusive)
      ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg0, rgba(40, 90, 50));
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(row.condition.c_str());
    ImGui::TableNextColumn();
    ImGui::Text("%s%s", row.metric.c_str(),
                (row.role == EndpointRole::primary) ? "" : " (diagnostic)");
    ImGui::TableNextColumn();
    ImGui::Text("%s [%s, %s]", number(row.ratio_p50, "{:.4f}").c_str(),
                number(row.ci_low, "{:.4f}").c_str(), number(row.ci_high, "{:.4f}").c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(number(row.tail_excess, "{:+.4f}").c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(decision_text(row.decision).c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(row.pairing.c_str());
  }
  ImGui::EndTable();
}

void draw_latencies(const ViewState& state) {
  const UrgentLatencies& l = state.latencies;
  std::vector<float> values, counts;
  double largest = 0;
  for (const LatencyPoint& p : l.points) {
    values.push_back(static_cast<float>(p.latency_us));
    largest = std::max(largest, p.latency_us);
  }
  for (std::size_t c : l.histogram) counts.push_back(static_cast<float>(c));
  const float width = ImGui::GetContentRegionAvail().x;
  ImGui::PlotLines("##latency", values.data(), static_cast<int>(values.size()), 0,
                   fmt::format("urgent latency on {} (us), {} submissions in order, max {:.1f}",
                               to_string(state.clock), values.size(), largest)
                       .c_str(),
                   0.0f, FLT_MAX, ImVec2(width, 90));
  ImGui::PlotHistogram(
      "##histogram", counts.data(), static_cast<int>(counts.size()), 0,
      fmt::format("histogram: {} bins of {:.1f} us from 0", counts.size(), l.bin_us).c_str(), 0.0f,
      FLT_MAX, ImVec2(width, 90));
}

void draw_compare(const ViewState& state) {
  const CompareResult& result = *state.second->compare;
  // A study's rounds are compared pooled per condition: the rows name the condition.
  const std::string scenario = compare_unit(state.run.scenarios[state.scenario]);
  ImGui::Text("method: %s (threshold %.0f %%), clock %s", to_string(result.method).c_str(),
              result.threshold_pct, std::string(to_string(state.clock)).c_str());
  if (!ImGui::BeginTable("compare", 6, ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg)) return;
  for (const char* column :
       {"workload", "metric", "A p50 (us; %: a share)", "B p50", "B - A, p50 interval", "verdict"})
    ImGui::TableSetupColumn(column);
  ImGui::TableHeadersRow();
  for (const CompareRow& row : result.rows) {
    if (row.scenario != scenario) continue;
    ImGui::TableNextRow();
    if (row.outcome != CompareOutcome::ok)
      ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg0, row.outcome == CompareOutcome::slower
                                                            ? rgba(110, 40, 40)
                                                            : rgba(40, 70, 110));
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(row.workload.c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(row.metric.c_str());
    ImGui::TableNextColumn();
    ImGui::Text("%.1f", row.baseline[0]);
    ImGui::TableNextColumn();
    ImGui::Text("%.1f", row.candidate[0]);
    ImGui::TableNextColumn();
    ImGui::Text("[%.1f, %.1f]", row.difference[0].low, row.difference[0].high);
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(std::string(to_string(row.outcome)).c_str());
  }
  ImGui::EndTable();
}

Edit make_edit(Edit::Kind kind, std::string workload = {}, std::string other = {}) {
  Edit edit;
  edit.kind = kind;
  edit.workload = std::move(workload);
  edit.other = std::move(other);
  return edit;
}

// The controls that change the running scenario (scenarios/scenario_edit.h). Each change is
// one edit, checked at once; the table shows the scenario as the accepted edits left it.
void draw_experiment(ViewState& state, live::LiveEdits& edits) {
  const std::string why_not = edits.why_not();
  const std::optional<EditableScenario> latest = edits.latest();
  if (!latest) {
    ImGui::TextUnformatted(why_not.c_str());
    return;
  }
  const Scenario& s = latest->scenario;
  ImGui::Text("version %u running: %s%s", edits.versions_started(),
              edits.newest_version_name().c_str(),
              edits.pending() ? " (an edit waits for the next frame boundary)" : "");
  if (!why_not.empty()) ImGui::TextUnformatted(why_not.c_str());
  ImGui::BeginDisabled(!why_not.empty());
  std::optional<Edit> edit;
  if (ImGui::BeginTable("experiment", 6, ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg)) {
    for (const char* column : {"on", "workload", "queue", "groups", "iterations", "depends on"})
      ImGui::TableSetupColumn(column);
    ImGui::TableHeadersRow();
    for (std::size_t w = 0; w < s.workloads.size(); ++w) {
      const WorkloadSpec& spec = s.workloads[w];
      ImGui::PushID(static_cast<int>(w));
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      bool on = latest->enabled[w];
      if (ImGui::Checkbox("##on", &on))
        edit = make_edit(on ? Edit::Kind::enable : Edit::Kind::disable, spec.name);
      ImGui::TableNextColumn();
      ImGui::Text("%s (%s)", spec.name.c_str(), std::string(to_string(spec.kind)).c_str());
      ImGui::TableNextColumn();
      ImGui::SetNextItemWidth(110);
      if (ImGui::BeginCombo("##queue", s.queues[spec.queue].name.c_str())) {
        for (const QueueSpec& q : s.queues)
          if (ImGui::Selectable(q.name.c_str(), &q == &s.queues[spec.queue]))
            edit = make_edit(Edit::Kind::queue, spec.name, q.name);
        ImGui::EndCombo();
      }
      // Enter applies a typed number; the +/- buttons apply each step. A copy has its bytes
      // instead (not editable live).
      for (auto [kind, value] : {std::pair{Edit::Kind::groups, spec.groups},
                                 std::pair{Edit::Kind::iterations, spec.iterations}}) {
        ImGui::TableNextColumn();
        if (spec.kind == WorkloadKind::copy) {
          if (kind == Edit::Kind::groups)
            ImGui::Text("%llu bytes", static_cast<unsigned long long>(spec.bytes));
          continue;
        }
        int typed = static_cast<int>(value);
        ImGui::SetNextItemWidth(110);
        if (ImGui::InputInt(kind == Edit::Kind::groups ? "##groups" : "##iterations", &typed, 1, 10,
                            ImGuiInputTextFlags_EnterReturnsTrue) &&
            typed != static_cast<int>(value))
          edit = make_edit(kind, spec.name), edit->number = std::uint32_t(std::max(0, typed));
      }
      ImGui::TableNextColumn();
      for (std::size_t d = 0; d < spec.depends_on.size(); ++d) {
        const DependencySpec& dep = spec.depends_on[d];
        const std::string& producer = s.workloads[dep.producer].name;
        ImGui::PushID(static_cast<int>(d));
        if (ImGui::SmallButton("x")) edit = make_edit(Edit::Kind::undepend, spec.name, producer);
        ImGui::SameLine();
        ImGui::SetNextItemWidth(230);
        const std::string label = producer + ": " + std::string(to_string(dep.barrier.kind));
        if (ImGui::BeginCombo("##barrier", label.c_str())) {
          for (const auto& [kind, name] : kBarrierKindNames)
            if (ImGui::Selectable(std::string(name).c_str(), kind == dep.barrier.kind))
              edit = make_edit(Edit::Kind::barrier, spec.name, producer), edit->barrier = kind;
          ImGui::EndCombo();
        }
        ImGui::PopID();
      }
      ImGui::SetNextItemWidth(230);
      // A copy's dependency is what it is (an upload has none, a readback its one source): no
      // edit adds one.
      if (spec.kind != WorkloadKind::copy && ImGui::BeginCombo("##depend", "+ depends on")) {
        for (const WorkloadSpec& other : s.workloads)
          if (&other != &spec && ImGui::Selectable(other.name.c_str()))
            edit = make_edit(Edit::Kind::depend, spec.name, other.name),
            edit->barrier = s.default_barrier;
        ImGui::EndCombo();
      }
      ImGui::PopID();
    }
    ImGui::EndTable();
  }
  for (const QueueSpec& q : s.queues) {
    ImGui::PushID(q.name.c_str());
    ImGui::SetNextItemWidth(140);
    if (ImGui::BeginCombo(("priority of " + q.name).c_str(),
                          std::string(to_string(q.priority)).c_str())) {
      for (const auto& [priority, name] : kQueuePriorityNames)
        if (ImGui::Selectable(std::string(name).c_str(), priority == q.priority))
          edit = make_edit(Edit::Kind::priority, {}, q.name), edit->priority = priority;
      ImGui::EndCombo();
    }
    ImGui::PopID();
    ImGui::SameLine();
  }
  bool timestamps = s.timestamps;
  if (ImGui::Checkbox("timestamp queries", &timestamps))
    edit = make_edit(Edit::Kind::timestamps), edit->on = timestamps;
  if (ImGui::Button("end the run here")) edits.end_session();
  ImGui::EndDisabled();
  ImGui::SameLine();
  ImGui::SetNextItemWidth(320);
  ImGui::InputText("##save", state.save_path.data(), state.save_path.size());
  ImGui::SameLine();
  if (ImGui::Button("save as TOML")) {
    const Status saved = edits.save_toml(state.save_path.data());
    state.save_outcome = {saved ? std::string("saved ") + state.save_path.data()
                                : "not saved: " + saved.error().message,
                          !saved};
  }
  if (edit) (void)edits.submit(*edit);  // its outcome is shown below, as a script's is
  for (const live::LiveEdits::Outcome& outcome : {edits.last_outcome(), state.save_outcome})
    if (!outcome.text.empty())
      ImGui::TextColored(outcome.refused ? ImVec4(1, 0.4f, 0.4f, 1) : ImVec4(0.5f, 0.9f, 0.5f, 1),
                         "%s", outcome.text.c_str());
}

// The view's one window: the whole viewport, without decoration, never raised over another.
void begin_whole_viewport(const char* name) {
  const ImGuiViewport* viewport = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(viewport->Pos);
  ImGui::SetNextWindowSize(viewport->Size);
  ImGui::Begin(name, nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                   ImGuiWindowFlags_NoBringToFrontOnFocus);
}

// One frame of the UI; returns the timeline as drawn.
layout::TimelineLayout draw_ui(ViewState& state, live::LiveEdits* edits) {
  begin_whole_viewport("gpuoverlap view");
  if (state.history) {
    if (ImGui::Button("back to the history")) state.history->shown = true;
    ImGui::SameLine();
    ImGui::Text("%s", state.run.directory.string().c_str());
  }
  for (const std::string& line : state.device) ImGui::TextUnformatted(line.c_str());
  if (!state.live_status.empty()) {
    ImGui::TextUnformatted(state.live_status.c_str());
    ImGui::SameLine();
    if (ImGui::Checkbox("follow the newest frame", &state.follow) && state.follow)
      state.medians = false;
  }
  ImGui::Separator();
  if (state.run.scenarios.empty()) {  // live, before the first measured frame
    ImGui::TextUnformatted("waiting for the first measured frame");
    ImGui::End();
    return {};
  }
  bool changed = false;
  refresh_tree(state);
  state.grids_drawn = nlohmann::json::object();
  ImGui::BeginChild("scenarios", ImVec2(260, 0), true);
  // A study as study > condition > round, a matrix as matrix > cell; the group holding the
  // selected scenario opens when first drawn.
  const std::function<void(const ScenarioTreeNode&)> draw_node = [&](const ScenarioTreeNode& n) {
    ImGui::PushID(&n);
    if (n.scenario && n.children.empty()) {
      // Shown on any device: every device's leaf of the scenario is selected.
      if (ImGui::Selectable(n.label.c_str(), shown_in_timeline(state, *n.scenario)) &&
          *n.scenario != state.scenario) {
        select_scenario(state, *n.scenario, std::nullopt);
        changed = true;
      }
    } else {
      const bool holds_shown =
          n.contains(state.scenario) ||
          std::any_of(state.bands.begin(), state.bands.end(), [&](const DeviceBand& band) {
            return band.scenario && n.contains(*band.scenario);
          });
      if (holds_shown) ImGui::SetNextItemOpen(true, ImGuiCond_Once);
      if (ImGui::TreeNode("group", "%s (%zu)", n.label.c_str(), n.leaves())) {
        for (const ScenarioTreeNode& c : n.children) draw_node(c);
        ImGui::TreePop();
      }
    }
    ImGui::PopID();
  };
  for (const ScenarioTreeNode& n : state.tree) draw_node(n);
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("main");
  const LoadedScenario& s = state.run.scenarios[state.scenario];
  if (state.bands.empty())
    ImGui::Text("%s: %zu frames", s.name.c_str(), state.frames.size());
  else  // the controls' frames and the panes below the timelines are the chosen device's
    ImGui::Text("%s on %zu devices; below: %s, %zu frames",
                split_device(state.devices, s.name).name.c_str(), state.bands.size(),
                s.name.c_str(), state.frames.size());
  ImGui::SameLine();
  for (Clock clock : state.clocks) {
    ImGui::SameLine();
    if (ImGui::RadioButton(std::string(to_string(clock)).c_str(), state.clock == clock)) {
      state.clock = clock;
      changed = true;
    }
  }
  ImGui::SameLine();
  changed |= ImGui::Checkbox("medians over all frames", &state.medians);
  if (!state.frames.empty()) {
    ImGui::SameLine();
    ImGui::SetNextItemWidth(300);
    if (ImGui::SliderInt("frame", &state.frame_index, 0,
                         static_cast<int>(state.frames.size()) - 1)) {
      state.medians = false;
      state.follow = false;
      changed = true;
    }
  }
  ImGui::SameLine();
  if (ImGui::Button("fit")) {
    state.fit_pending = true;
    state.auto_fit = true;
    changed = true;
  }
  if (changed) rebuild(state);
  // The frame-time history strip: each frame's first start to last end.
  std::vector<float> history;
  for (const FrameSpan& span : state.spans) history.push_back(static_cast<float>(span.span_us));
  if (!history.empty())
    ImGui::PlotLines(
        "##history", history.data(), static_cast<int>(history.size()), 0,
        fmt::format("frame span on {} (us), {} frames", to_string(state.clock), history.size())
            .c_str(),
        0.0f, FLT_MAX, ImVec2(ImGui::GetContentRegionAvail().x, 60));
  if (!state.frame_time.empty()) ImGui::TextWrapped("%s", state.frame_time.c_str());
  layout::TimelineLayout drawn;
  if (!state.bands.empty()) {
    drawn = draw_device_bands(state);
  } else if (!state.second) {
    drawn = draw_timeline(state, state.input, "timeline", 240);
  } else {
    // A/B: one time range for both, so the same place means the same time.
    ImGui::Text("A: %s", state.run.directory.string().c_str());
    drawn = draw_timeline(state, state.input, "timeline", 120);
    ImGui::Text("B: %s", state.second->directory.string().c_str());
    state.second_drawn = {};
    if (state.second->input)
      state.second_drawn = draw_timeline(state, *state.second->input, "timeline-b", 120);
    else
      ImGui::TextUnformatted("this scenario is not in B");
    if (ImGui::CollapsingHeader("A/B: compare", ImGuiTreeNodeFlags_DefaultOpen))
      draw_compare(state);
  }
  if (edits && ImGui::CollapsingHeader("experiment: edits apply at the next frame boundary",
                                       ImGuiTreeNodeFlags_DefaultOpen))
    draw_experiment(state, *edits);
  if (state.preemption && !state.preemption->entries.empty() &&
      ImGui::CollapsingHeader("preemption matrix", ImGuiTreeNodeFlags_DefaultOpen))
    draw_preemption_grid(state);
  if (!state.latencies.points.empty() &&
      ImGui::CollapsingHeader("preemption: urgent latency", ImGuiTreeNodeFlags_DefaultOpen))
    draw_latencies(state);
  if (state.verdict && ImGui::CollapsingHeader("study: each condition's effect against the margins",
                                               ImGuiTreeNodeFlags_DefaultOpen)) {
    draw_time_accounts(state);
    draw_forest(state);
    draw_dose_response(state);
  }
  if (ImGui::CollapsingHeader("dependency gaps", ImGuiTreeNodeFlags_DefaultOpen)) draw_gaps(state);
  if (!state.overlap.empty() &&
      ImGui::CollapsingHeader("overlap matrix", ImGuiTreeNodeFlags_DefaultOpen)) {
    draw_overlap_grid(state);
    if (ImGui::TreeNode("every pair")) {
      draw_overlap(state);
      ImGui::TreePop();
    }
  }
  if ((state.verdict || !state.verdict_error.empty()) &&
      ImGui::CollapsingHeader("study verdict", ImGuiTreeNodeFlags_DefaultOpen))
    draw_verdict(state);
  ImGui::EndChild();
  ImGui::End();
  // A grid cell clicked: its scenario from the next frame on, on the clock shown.
  if (state.open_next) {
    select_scenario(state, *state.open_next, state.clock);
    state.open_next.reset();
    rebuild(state);
  }
  return drawn;
}

// One of the trend's lists as a combo box; true when another entry was picked.
template <class T, class Text>
bool choice_combo(const char* label, T& choice, const std::vector<T>& options, Text text) {
  bool picked = false;
  ImGui::SetNextItemWidth(190);
  if (ImGui::BeginCombo(label, text(choice).c_str())) {
    for (const T& option : options)
      if (ImGui::Selectable(text(option).c_str(), option == choice) && !(option == choice)) {
        choice = option;
        picked = true;
      }
    ImGui::EndCombo();
  }
  return picked;
}

void draw_runs(HistoryView& h) {
  constexpr double kLabelPx = 380, kRowPx = 26, kTickRowPx = 22, kMarkRadiusPx = 5;
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float width = std::max(ImGui::GetContentRegionAvail().x, 500.0f);
  const double rows_px = kRowPx * static_cast<double>(std::max<std::size_t>(h.runs.rows.size(), 1));
  ImGui::InvisibleButton("runs", ImVec2(width, static_cast<float>(rows_px + kTickRowPx)));
  const bool hovered = ImGui::IsItemHovered(), clicked = ImGui::IsItemClicked();
  h.runs_drawn = runs_layout(h.runs, {origin.x, origin.y, origin.x + width, origin.y + rows_px},
                             kLabelPx, kRowPx);
  const RunsLayout& l = h.runs_drawn;
  ImDrawList* draw = ImGui::GetWindowDrawList();
  auto v = [](double x, double y) { return ImVec2(static_cast<float>(x), static_cast<float>(y)); };
  for (std::size_t r = 0; r < l.rows.size(); ++r) {
    const layout::Rect& row = l.rows[r];
    draw->AddRectFilled(v(row.x0, row.y0), v(row.x1, row.y1),
                        r % 2 ? rgba(40, 40, 46) : rgba(32, 32, 37));
    draw->PushClipRect(v(row.x0, row.y0), v(l.plot.x0 - 6, row.y1), true);
    draw->AddText(v(row.x0 + 4, row.y0 + 5), rgba(220, 220, 220), h.runs.rows[r].label.c_str());
    draw->PopClipRect();
    draw->AddLine(v(l.plot.x0, (row.y0 + row.y1) / 2), v(l.plot.x1, (row.y0 + row.y1) / 2),
                  rgba(80, 80, 90));
  }
  for (const AxisTick& t : l.ticks) {
    draw->AddLine(v(t.at, l.plot.y0), v(t.at, l.plot.y1 + 4), rgba(90, 90, 100));
    const float text_px = ImGui::CalcTextSize(t.label.c_str()).x;
    const double x = std::clamp(t.at - text_px / 2, l.plot.x0, l.plot.x1 - text_px);
    draw->AddText(v(x, l.plot.y1 + 4), rgba(170, 170, 170), t.label.c_str());
  }
  // A run whose folder is still there is filled; one whose folder is gone, an outline.
  for (const MarkPlace& m : l.marks) {
    if (h.present[m.row][m.mark])
      draw->AddCircleFilled(v(m.x, m.y), kMarkRadiusPx, rgba(70, 130, 220));
    else
      draw->AddCircle(v(m.x, m.y), kMarkRadiusPx, rgba(160, 160, 160), 0, 1.5f);
  }
  if (!hovered) return;
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  const auto under = mark_at(l, mouse.x, mouse.y, kMarkRadiusPx + 2);
  if (!under) return;
  const RunMark& mark = h.runs.rows[under->row].marks[under->mark];
  ImGui::SetTooltip("%s\n(click: open the folder)", mark_text(mark).c_str());
  if (!clicked) return;
  std::error_code ec;
  const RunOpening opening = open_run(mark, std::filesystem::is_directory(mark.directory, ec));
  h.message = opening.message;
  h.open_pending = opening.open;
}

void draw_trend(HistoryView& h) {
  if (h.data.series.empty()) {
    ImGui::TextUnformatted("the history holds no series");
    return;
  }
  bool picked = false;
  picked |= choice_combo("machine", h.choice.machine_id, h.menus.machines,
                         [](std::int64_t id) { return fmt::format("machine {}", id); });
  const auto same = [](const std::string& t) { return t; };
  ImGui::SameLine();
  picked |= choice_combo("scenario", h.choice.scenario, h.menus.scenarios, same);
  ImGui::SameLine();
  picked |= choice_combo("series", h.choice.series, h.menus.series, same);
  picked |= choice_combo("metric", h.choice.metric, h.menus.metrics, same);
  ImGui::SameLine();
  picked |= choice_combo("clock", h.choice.clock, h.menus.clocks, same);
  if (picked) choose_series(h);
  h.trend_drawn = {};
  if (!h.trend) return;
  const TrendScene& t = *h.trend;
  ImGui::Text("%s: %zu runs, %zu change point%s", t.title.c_str(), t.points.size(),
              t.changes.size(), t.changes.size() == 1 ? "" : "s");
  constexpr double kAxisPx = 80, kPlotPx = 260;
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float width = std::max(ImGui::GetContentRegionAvail().x, 500.0f);
  ImGui::InvisibleButton("trend", ImVec2(width, static_cast<float>(kPlotPx)));
  const bool hovered = ImGui::IsItemHovered();
  h.trend_drawn = trend_layout(
      t, {origin.x + kAxisPx, origin.y + 6, origin.x + width - 10, origin.y + kPlotPx - 6});
  const TrendLayout& l = h.trend_drawn;
  ImDrawList* draw = ImGui::GetWindowDrawList();
  auto v = [](double x, double y) { return ImVec2(static_cast<float>(x), static_cast<float>(y)); };
  draw->AddRectFilled(v(l.plot.x0, l.plot.y0), v(l.plot.x1, l.plot.y1), rgba(28, 28, 33));
  for (const AxisTick& tick : l.y_ticks) {
    draw->AddLine(v(l.plot.x0, tick.at), v(l.plot.x1, tick.at), rgba(55, 55, 62));
    const float text_px = ImGui::CalcTextSize(tick.label.c_str()).x;
    draw->AddText(v(l.plot.x0 - 6 - text_px, tick.at - 7), rgba(170, 170, 170), tick.label.c_str());
  }
  // The 95 % band: a quad between neighbouring points that both have their interval.
  for (std::size_t i = 0; i + 1 < l.points.size(); ++i) {
    const TrendPointPlace &a = l.points[i], &b = l.points[i + 1];
    if (a.y_low && a.y_high && b.y_low && b.y_high)
      draw->AddQuadFilled(v(a.x, *a.y_high), v(b.x, *b.y_high), v(b.x, *b.y_low), v(a.x, *a.y_low),
                          rgba(70, 130, 220, 70));
  }
  for (const TrendPointPlace& p : l.points)
    if (p.y_low && p.y_high)
      draw->AddLine(v(p.x, *p.y_low), v(p.x, *p.y_high), rgba(70, 130, 220, 140));
  for (const LevelSegment& s : l.levels)
    draw->AddLine(v(s.x0, s.y), v(s.x1, s.y), rgba(230, 200, 60), 1.5f);
  for (std::size_t i = 0; i + 1 < l.points.size(); ++i)
    draw->AddLine(v(l.points[i].x, l.points[i].y), v(l.points[i + 1].x, l.points[i + 1].y),
                  rgba(220, 220, 220), 1.5f);
  for (const TrendPointPlace& p : l.points)
    draw->AddCircleFilled(v(p.x, p.y), 3, rgba(230, 230, 230));
  for (const ChangeMark& c : l.changes) {
    draw->AddLine(v(c.x, l.plot.y0), v(c.x, l.plot.y1), rgba(230, 70, 70), 2);
    draw->AddText(v(c.x + 4, l.plot.y0 + 2), rgba(230, 70, 70), c.label.c_str());
  }
  if (!hovered || l.points.empty()) return;
  // The run under the pointer's column.
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  std::size_t nearest = 0;
  for (std::size_t i = 1; i < l.points.size(); ++i)
    if (std::abs(l.points[i].x - mouse.x) < std::abs(l.points[nearest].x - mouse.x)) nearest = i;
  const history::SeriesPoint& p = t.points[nearest];
  ImGui::SetTooltip(
      "run %lld, started %s\n%.4g%s", static_cast<long long>(p.run_id), p.started_at.c_str(),
      p.value, p.low && p.high ? fmt::format(" [{:.4g}, {:.4g}]", *p.low, *p.high).c_str() : "");
}

// `view --db`: the history's window (the runs per machine, then a series' trend).
void draw_history(HistoryView& h) {
  begin_whole_viewport("gpuoverlap view --db");
  ImGui::Text("history: %s: %zu run%s on %zu machine%s", h.data.shown.c_str(), h.data.runs.size(),
              h.data.runs.size() == 1 ? "" : "s", h.runs.rows.size(),
              h.runs.rows.size() == 1 ? "" : "s");
  if (!h.message.empty()) ImGui::TextColored(ImVec4(1, 0.4f, 0.4f, 1), "%s", h.message.c_str());
  ImGui::Separator();
  if (ImGui::CollapsingHeader("runs per machine (click a run to open its folder)",
                              ImGuiTreeNodeFlags_DefaultOpen)) {
    draw_runs(h);
    if (h.runs.undated)
      ImGui::Text("%zu run%s without a readable start time, not placed", h.runs.undated,
                  h.runs.undated == 1 ? "" : "s");
  }
  if (ImGui::CollapsingHeader("trend", ImGuiTreeNodeFlags_DefaultOpen)) draw_trend(h);
  ImGui::End();
}

nlohmann::json history_json(const HistoryView& h, int width, int height) {
  auto point = [](double x, double y) { return nlohmann::json{x, y}; };
  auto rect = [](const layout::Rect& r) { return nlohmann::json{r.x0, r.y0, r.x1, r.y1}; };
  nlohmann::json rows = nlohmann::json::array();
  for (std::size_t r = 0; r < h.runs.rows.size(); ++r) {
    const MachineRow& row = h.runs.rows[r];
    nlohmann::json marks = nlohmann::json::array();
    for (const MarkPlace& m : h.runs_drawn.marks)
      if (m.row == r) {
        const RunMark& mark = row.marks[m.mark];
        marks.push_back({{"run_id", mark.run_id},
                         {"started_at", mark.started_at},
                         {"directory", mark.directory},
                         {"present", static_cast<bool>(h.present[r][m.mark])},
                         {"at", point(m.x, m.y)}});
      }
    nlohmann::json entry = {{"machine_id", row.machine_id}, {"label", row.label}, {"marks", marks}};
    if (r < h.runs_drawn.rows.size()) entry["rect"] = rect(h.runs_drawn.rows[r]);
    rows.push_back(entry);
  }
  nlohmann::json ticks = nlohmann::json::array();
  for (const AxisTick& t : h.runs_drawn.ticks) ticks.push_back({{"x", t.at}, {"label", t.label}});
  nlohmann::json trend = nullptr;
  if (h.trend) {
    const TrendScene& t = *h.trend;
    nlohmann::json points = nlohmann::json::array(), changes = nlohmann::json::array();
    for (std::size_t i = 0; i < t.points.size() && i < h.trend_drawn.points.size(); ++i) {
      const history::SeriesPoint& p = t.points[i];
      const TrendPointPlace& at = h.trend_drawn.points[i];
      points.push_back({{"run_id", p.run_id},
                        {"value", p.value},
                        {"low", p.low ? nlohmann::json(*p.low) : nlohmann::json(nullptr)},
                        {"high", p.high ? nlohmann::json(*p.high) : nlohmann::json(nullptr)},
                        {"at", point(at.x, at.y)}});
    }
    for (const ChangeMark& c : h.trend_drawn.changes)
      changes.push_back({{"index", c.index},
                         {"run_id", t.points[c.index].run_id},
                         {"x", c.x},
                         {"label", c.label}});
    trend = {{"title", t.title},
             {"machine_id", t.key.machine_id},
             {"scenario", t.key.scenario},
             {"series", t.key.series},
             {"metric", t.key.metric},
             {"clock", t.key.clock},
             {"band", t.band},
             {"range", {t.low, t.high}},
             {"plot", rect(h.trend_drawn.plot)},
             {"points", points},
             {"change_points", changes}};
  }
  return {{"mode", "history"},
          {"history", h.data.shown},
          {"width", width},
          {"height", height},
          {"runs", h.data.runs.size()},
          {"machine_rows", rows},
          {"undated_runs", h.runs.undated},
          {"time_axis", {{"begin_s", h.runs.begin_s}, {"end_s", h.runs.end_s}, {"ticks", ticks}}},
          {"menus",
           {{"machines", h.menus.machines},
            {"scenarios", h.menus.scenarios},
            {"series", h.menus.series},
            {"metrics", h.menus.metrics},
            {"clocks", h.menus.clocks}}},
          {"trend", trend},
          {"message", h.message}};
}

nlohmann::json layout_json(const ViewState& state, const layout::TimelineLayout& drawn, int width,
                           int height) {
  const nlohmann::json timeline = timeline_json(state.input, drawn);
  auto rect = [](const layout::Rect& r) { return nlohmann::json{r.x0, r.y0, r.x1, r.y1}; };
  nlohmann::json overlap = nlohmann::json::array();
  for (const OverlapCell& c : state.overlap)
    overlap.push_back({{"a", c.a}, {"b", c.b}, {"frames", c.frames}, {"overlapped", c.overlapped}});
  nlohmann::json second = nullptr;
  if (state.second) {
    nlohmann::json b_bars = nlohmann::json::array();
    if (state.second->input)
      for (const layout::Bar& b : state.second_drawn.bars)
        b_bars.push_back({{"workload", state.second->input->workloads[b.workload].name},
                          {"rect", rect(b.rect)}});
    std::size_t rows = 0, changed = 0;
    for (const CompareRow& row : state.second->compare->rows)
      if (row.scenario == compare_unit(state.run.scenarios[state.scenario]))
        ++rows, changed += row.outcome != CompareOutcome::ok;
    second = {{"directory", state.second->directory.string()},
              {"has_scenario", state.second->input.has_value()},
              {"bars", b_bars},
              {"compare_method", to_string(state.second->compare->method)},
              {"compare_rows", rows},
              {"compare_changed", changed}};
  }
  nlohmann::json latency = nullptr;
  if (!state.latencies.points.empty())
    latency = {{"points", state.latencies.points.size()},
               {"histogram", state.latencies.histogram},
               {"bin_us", state.latencies.bin_us}};
  nlohmann::json verdict = nullptr;
  if (state.verdict)
    verdict = {{"file", state.verdict->file.string()}, {"rows", state.verdict->rows.size()}};
  else if (!state.verdict_error.empty())
    verdict = {{"error", state.verdict_error}};
  const LoadedScenario& s = state.run.scenarios[state.scenario];
  return {
      {"scenario", s.name},
      {"clock", to_string(state.clock)},
      {"frame", state.medians || state.frames.empty()
                    ? nlohmann::json(nullptr)
                    : nlohmann::json(state.frames[static_cast<std::size_t>(state.frame_index)])},
      {"width", width},
      {"height", height},
      {"view_us", {state.view.begin_us, state.view.end_us}},
      {"lanes", timeline["lanes"]},
      {"bars", timeline["bars"]},
      {"arrows", timeline["arrows"]},
      {"devices", state.bands.empty() ? nlohmann::json(nullptr) : state.bands_drawn},
      {"overlap", overlap},
      {"verdict", verdict},
      {"b", second},
      {"urgent_latency", latency},
      {"device_lines", state.device},
      {"scenario_tree", tree_json(state, state.tree)},
      {"overlap_grid", state.grids_drawn.value("overlap_grid", nlohmann::json())},
      {"preemption_grid", state.grids_drawn.value("preemption_grid", nlohmann::json())},
      {"forest", state.grids_drawn.value("forest", nlohmann::json())},
      {"dose_response", state.grids_drawn.value("dose_response", nlohmann::json())},
      {"time_accounts", state.grids_drawn.value("time_accounts", nlohmann::json())},
      {"frame_time",
       state.frame_time.empty() ? nlohmann::json(nullptr) : nlohmann::json(state.frame_time)}};
}

Status write_screenshot(const std::filesystem::path& path, const nlohmann::json& sidecar, int width,
                        int height) {
  RgbaImage image;
  image.width = width;
  image.height = height;
  image.pixels.resize(static_cast<std::size_t>(width) * height * 4);
  std::vector<std::uint8_t> rows(image.pixels.size());
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadBuffer(GL_BACK);
  glReadPixels(0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, rows.data());
  const std::size_t stride = static_cast<std::size_t>(width) * 4;
  for (int y = 0; y < height; ++y)  // OpenGL's rows start at the bottom
    std::copy_n(rows.data() + static_cast<std::size_t>(height - 1 - y) * stride, stride,
                image.pixels.data() + static_cast<std::size_t>(y) * stride);
  GPUOVERLAP_TRY(write_png(path, image));
  return write_file_atomically(path.string() + ".layout.json", sidecar.dump(2) + "\n");
}

// A results folder, checked against what the command line asked to see first.
int load_folder(const ViewOptions& options, ViewState& state, std::ostream& err) {
  auto loaded = load_results(options.results);
  if (!loaded) {
    err << "view: " << loaded.error().message << "\n";
    return 2;
  }
  state.run = std::move(*loaded);
  if (state.run.scenarios.empty()) {
    err << "view: " << options.results.string() << " holds no scenario results\n";
    return 2;
  }
  state.devices = run_devices(state.run);
  std::size_t first = 0;
  if (options.scenario) {
    // On several devices, a name without its device folder is the first device's.
    const auto found = find_scenario(state.run, state.devices, *options.scenario);
    if (!found) {
      err << "view: no scenario '" << *options.scenario << "' in " << options.results.string()
          << "; it has:";
      for (const LoadedScenario& s : state.run.scenarios) err << " " << s.name;
      err << "\n";
      return 2;
    }
    first = *found;
  }
  select_scenario(state, first, options.clock);
  if (options.clock &&
      std::find(state.clocks.begin(), state.clocks.end(), *options.clock) == state.clocks.end()) {
    err << "view: scenario " << state.run.scenarios[first].name << " has no value on the "
        << to_string(*options.clock) << " clock\n";
    return 2;
  }
  if (options.frame) {
    const auto it = std::find(state.frames.begin(), state.frames.end(), *options.frame);
    if (it == state.frames.end()) {
      err << "view: scenario " << state.run.scenarios[first].name << " has no frame "
          << *options.frame << " (frames " << (state.frames.empty() ? 0 : state.frames.front())
          << " to " << (state.frames.empty() ? 0 : state.frames.back()) << ")\n";
      return 2;
    }
    state.frame_index = static_cast<int>(it - state.frames.begin());
    state.medians = false;
  }
  state.follow = false;
  if (options.candidate) {
    auto second = load_results(*options.candidate);
    if (!second) {
      err << "view: " << second.error().message << "\n";
      return 2;
    }
    if (second->scenarios.empty()) {
      err << "view: " << options.candidate->string() << " holds no scenario results\n";
      return 2;
    }
    state.second = SecondFolder{*options.candidate, std::move(*second), {}, {}, Clock::poll};
    state.devices.clear();  // A/B: one device's scenario against B's
  }
  return 0;
}

// `view --db`: the history read before any window, each run's folder looked at once.
int load_history(const history::Location& location, ViewState& state, std::ostream& err) {
  auto data = read_history(location);
  if (!data) {
    err << "view: " << data.error().message << "\n";
    return data.error().category == ErrorCategory::environment ? 3 : 2;
  }
  HistoryView h;
  h.data = std::move(*data);
  h.runs = runs_scene(h.data);
  for (const MachineRow& row : h.runs.rows) {
    std::vector<bool> present;
    for (const RunMark& mark : row.marks) {
      std::error_code ec;
      present.push_back(std::filesystem::is_directory(mark.directory, ec));
    }
    h.present.push_back(std::move(present));
  }
  h.choice = default_choice(h.data.series);
  choose_series(h);
  state.history = std::move(h);
  return 0;
}

// A run's folder clicked in the history: shown as `view RESULTS_DIR` shows it, the history
// kept for "back to the history". A folder that cannot be read leaves the history shown,
// saying why.
void open_from_history(ViewState& state, const std::filesystem::path& folder) {
  ViewOptions options;
  options.results = folder;
  ViewState opened;
  std::ostringstream why;
  if (load_folder(options, opened, why) != 0) {
    std::string text = why.str();
    while (!text.empty() && text.back() == '\n') text.pop_back();
    state.history->message = text;
    return;
  }
  opened.history = std::move(state.history);
  opened.history->shown = false;
  opened.history->message.clear();
  state = std::move(opened);
  rebuild(state);
}

}  // namespace

bool display_available(std::string& why) {
  glfwSetErrorCallback(on_glfw_error);
  if (!glfwInit()) {
    why = glfw_error;
    return false;
  }
  // GLFW stays initialised for run_viewer (glfwInit again is a no-op). Closing the connection
  // here would let an X server reset when its last client leaves (Xvfb does), and the window
  // opened next could find no display while it resets.
  return true;
}

int run_viewer(const ViewOptions& options, std::ostream& out, std::ostream& err) {
  ViewState state;
  if (options.history) {
    if (const int status = load_history(*options.history, state, err); status != 0) return status;
  } else if (!options.live) {
    if (const int status = load_folder(options, state, err); status != 0) return status;
  }

  glfwSetErrorCallback(on_glfw_error);
  if (!glfwInit()) {
    err << "view: no display (" << glfw_error
        << "); the viewer needs one: set DISPLAY, or run under xvfb-run\n";
    return 2;
  }
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 0);
  const std::string title = options.live      ? std::string("gpuoverlap run --live")
                            : options.history ? "gpuoverlap view --db " + options.history->shown
                                              : "gpuoverlap view " + options.results.string();
  GLFWwindow* window =
      glfwCreateWindow(options.width_px, options.height_px, title.c_str(), nullptr, nullptr);
  if (!window) {
    err << "view: no OpenGL 3 window (" << glfw_error << ")\n";
    glfwTerminate();
    return 2;
  }
  glfwMakeContextCurrent(window);
  glfwSwapInterval(1);
  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGui::GetIO().IniFilename = nullptr;  // no imgui.ini left in the working directory
  // A screenshot shows the data, not a tooltip under wherever the pointer happens to be.
  if (options.screenshot) ImGui::GetIO().ConfigFlags |= ImGuiConfigFlags_NoMouse;
  ImGui::StyleColorsDark();
  ImGui_ImplGlfw_InitForOpenGL(window, true);
  ImGui_ImplOpenGL3_Init("#version 130");

  if (!state.run.scenarios.empty()) rebuild(state);
  if (options.on_window_open) options.on_window_open();
  std::uint64_t live_version = 0;
  // Live with a screenshot: frames rendered since the run ended (it is taken after).
  std::uint32_t rendered_after_end = 0;
  const std::uint32_t frames_before_shot =
      options.exit_after_frames ? options.exit_after_frames : 3;
  int status = 0;
  for (std::uint32_t rendered = 1; !glfwWindowShouldClose(window); ++rendered) {
    glfwPollEvents();
    if (options.live) {
      const bool ended = options.live->finished();  // before the snapshot: it then has it all
      take_snapshot(state, *options.live, live_version, options.clock);
      if (ended) ++rendered_after_end;
    }
    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    ImGui::NewFrame();
    const bool history_shown = state.history && state.history->shown;
    layout::TimelineLayout drawn;
    if (history_shown)
      draw_history(*state.history);
    else
      drawn = draw_ui(state, options.edits);
    ImGui::Render();
    int width = 0, height = 0;
    glfwGetFramebufferSize(window, &width, &height);
    glViewport(0, 0, width, height);
    glClearColor(0.08f, 0.08f, 0.09f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    const bool ready =
        options.live ? rendered_after_end >= frames_before_shot : rendered >= frames_before_shot;
    if (options.screenshot && ready) {
      if (!history_shown && state.run.scenarios.empty()) {
        err << "view: the run measured no frame to show\n";
        status = 3;
        break;
      }
      // The sidecar says what was drawn where: the history's window or a run's.
      const nlohmann::json sidecar = history_shown ? history_json(*state.history, width, height)
                                                   : layout_json(state, drawn, width, height);
      if (Status s = write_screenshot(*options.screenshot, sidecar, width, height); !s) {
        err << "view: " << s.error().message << "\n";
        status = 3;
      } else {
        out << "screenshot: " << options.screenshot->string() << " (" << width << "x" << height
            << ")\n";
      }
      break;
    }
    glfwSwapBuffers(window);
    // A run clicked in the history: its folder from the next frame on.
    if (state.history && state.history->open_pending) {
      const std::filesystem::path folder = *state.history->open_pending;
      state.history->open_pending.reset();
      open_from_history(state, folder);
    }
  }
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(window);
  glfwTerminate();
  return status;
}

}  // namespace gpuoverlap::viewer
