#include <fmt/format.h>

#include <algorithm>
#include <cfloat>
#include <functional>

#include "viewer/panels.h"

namespace gpuoverlap::viewer {

namespace {

// Above the scenario list: the way back to the history, the device, and live's status.
void draw_run_header(ViewState& state) {
  if (state.history) {
    if (ImGui::Button("back to the history")) state.history->shown = true;
    ImGui::SameLine();
    ImGui::Text("%s", state.run.directory.string().c_str());
  }
  for (const std::string& line : state.device) ImGui::TextUnformatted(line.c_str());
  if (!state.live.status.empty()) {
    ImGui::TextUnformatted(state.live.status.c_str());
    ImGui::SameLine();
    if (ImGui::Checkbox("follow the newest frame", &state.live.follow) && state.live.follow)
      state.medians = false;
  }
  ImGui::Separator();
}

// The scenario list; true when another scenario was chosen.
bool draw_scenario_list(ViewState& state) {
  bool changed = false;
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
      const bool holds_shown = n.contains(state.scenario) ||
                               std::any_of(state.devices.bands.begin(), state.devices.bands.end(),
                                           [&](const DeviceBand& band) {
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
  return changed;
}

// The scenario's title, its clocks, medians or a frame, and "fit"; true when one changed.
bool draw_frame_controls(ViewState& state) {
  bool changed = false;
  const LoadedScenario& s = state.run.scenarios[state.scenario];
  if (state.devices.bands.empty())
    ImGui::Text("%s: %zu frames", s.name.c_str(), state.frames.size());
  else  // the controls' frames and the panes below the timelines are the chosen device's
    ImGui::Text("%s on %zu devices; below: %s, %zu frames",
                split_device(state.devices.list, s.name).name.c_str(), state.devices.bands.size(),
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
      state.live.follow = false;
      changed = true;
    }
  }
  ImGui::SameLine();
  if (ImGui::Button("fit")) {
    state.fit_pending = true;
    state.live.auto_fit = true;
    changed = true;
  }
  return changed;
}

// The frame-time history strip (each frame's first start to last end) and the frame time.
void draw_frame_history(const ViewState& state) {
  std::vector<float> history;
  for (const FrameSpan& span : state.spans) history.push_back(static_cast<float>(span.span_us));
  if (!history.empty())
    ImGui::PlotLines(
        "##history", history.data(), static_cast<int>(history.size()), 0,
        fmt::format("frame span on {} (us), {} frames", to_string(state.clock), history.size())
            .c_str(),
        0.0f, FLT_MAX, ImVec2(ImGui::GetContentRegionAvail().x, 60));
  if (!state.frame_time.empty()) ImGui::TextWrapped("%s", state.frame_time.c_str());
}

// The panes below the timeline, each under its header.
void draw_panes(ViewState& state, live::LiveEdits* edits) {
  if (edits && ImGui::CollapsingHeader("experiment: edits apply at the next frame boundary",
                                       ImGuiTreeNodeFlags_DefaultOpen))
    draw_experiment(state, *edits);
  if (state.preemption && !state.preemption->entries.empty() &&
      ImGui::CollapsingHeader("preemption matrix", ImGuiTreeNodeFlags_DefaultOpen))
    draw_preemption_grid(state);
  if (!state.latencies.points.empty() &&
      ImGui::CollapsingHeader("preemption: urgent latency", ImGuiTreeNodeFlags_DefaultOpen))
    draw_latencies(state);
  if (state.study.verdict &&
      ImGui::CollapsingHeader("study: each condition's effect against the margins",
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
  if ((state.study.verdict || !state.study.error.empty()) &&
      ImGui::CollapsingHeader("study verdict", ImGuiTreeNodeFlags_DefaultOpen))
    draw_verdict(state);
}

}  // namespace

// One frame of a run's window; returns the timeline as drawn.
layout::TimelineLayout draw_ui(ViewState& state, live::LiveEdits* edits) {
  begin_whole_viewport("gpuoverlap view");
  draw_run_header(state);
  if (state.run.scenarios.empty()) {  // live, before the first measured frame
    ImGui::TextUnformatted("waiting for the first measured frame");
    ImGui::End();
    return {};
  }
  refresh_tree(state);
  state.grids_drawn = nlohmann::json::object();
  bool changed = draw_scenario_list(state);
  ImGui::SameLine();
  ImGui::BeginChild("main");
  changed |= draw_frame_controls(state);
  if (changed) rebuild(state);
  draw_frame_history(state);
  layout::TimelineLayout drawn;
  if (!state.devices.bands.empty())
    drawn = draw_device_bands(state);
  else if (!state.compare)
    drawn = draw_timeline(state, state.input, "timeline", 240);
  else
    drawn = draw_ab_timelines(state);
  draw_panes(state, edits);
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

}  // namespace gpuoverlap::viewer
