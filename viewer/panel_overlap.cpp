#include <fmt/format.h>

#include <algorithm>

#include "timeline/statistics.h"
#include "viewer/panels.h"

namespace gpuoverlap::viewer {

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

}  // namespace gpuoverlap::viewer
