#include <fmt/format.h>

#include <algorithm>
#include <cfloat>
#include <cmath>

#include "viewer/panels.h"

namespace gpuoverlap::viewer {

namespace {

// Log scale from green (the fastest cell) to red (the slowest).
ImU32 latency_colour(double value_us, double low_us, double high_us) {
  const double t =
      high_us > low_us && low_us > 0 && value_us > 0
          ? std::clamp(std::log(value_us / low_us) / std::log(high_us / low_us), 0.0, 1.0)
          : 0.0;
  return rgba(50 + static_cast<int>(160 * t), 140 - static_cast<int>(90 * t),
              70 - static_cast<int>(20 * t));
}

}  // namespace

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

}  // namespace gpuoverlap::viewer
