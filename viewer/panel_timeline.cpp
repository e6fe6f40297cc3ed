#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "viewer/panels.h"

namespace gpuoverlap::viewer {

namespace {

constexpr int kComputeRgb[3] = {70, 130, 220};
constexpr int kGraphicsRgb[3] = {235, 150, 50};

}  // namespace

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
      state.live.auto_fit = false;
      state.view.begin_us = at - (at - state.view.begin_us) * factor;
      state.view.end_us = at + (state.view.end_us - at) * factor;
    }
  }
  if (ImGui::IsItemActive() && ImGui::IsMouseDragging(ImGuiMouseButton_Left)) {
    state.live.auto_fit = false;
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
    // The frame loop's states by the kernel's record: ready without a CPU in red, asleep grey.
    static constexpr int kRunnableRgb[3] = {205, 70, 60};
    static constexpr int kAsleepRgb[3] = {85, 88, 96};
    const layout::WorkloadTiming& lane = input.workloads[bar.workload];
    const int* rgb = lane.cpu_state == "runnable" ? kRunnableRgb
                     : lane.cpu_state == "asleep" ? kAsleepRgb
                     : lane.background            ? kBackgroundRgb
                     : bar.graphics               ? kGraphicsRgb
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

}  // namespace gpuoverlap::viewer
