#include "viewer/panels.h"

namespace gpuoverlap::viewer {

// A/B: one time range for both, so the same place means the same time.
layout::TimelineLayout draw_ab_timelines(ViewState& state) {
  ImGui::Text("A: %s", state.run.directory.string().c_str());
  const layout::TimelineLayout drawn = draw_timeline(state, state.input, "timeline", 120);
  ImGui::Text("B: %s", state.compare->directory.string().c_str());
  state.compare->drawn = {};
  if (state.compare->input)
    state.compare->drawn = draw_timeline(state, *state.compare->input, "timeline-b", 120);
  else
    ImGui::TextUnformatted("this scenario is not in B");
  if (ImGui::CollapsingHeader("A/B: compare", ImGuiTreeNodeFlags_DefaultOpen)) draw_compare(state);
  return drawn;
}

void draw_compare(const ViewState& state) {
  const CompareResult& result = *state.compare->result;
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

}  // namespace gpuoverlap::viewer
