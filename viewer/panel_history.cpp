#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "viewer/panels.h"

namespace gpuoverlap::viewer {

namespace {

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

}  // namespace

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

}  // namespace gpuoverlap::viewer
