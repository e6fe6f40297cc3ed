#include <algorithm>

#include "live/live_edits.h"
#include "viewer/panels.h"

namespace gpuoverlap::viewer {

namespace {

Edit make_edit(Edit::Kind kind, std::string workload = {}, std::string other = {}) {
  Edit edit;
  edit.kind = kind;
  edit.workload = std::move(workload);
  edit.other = std::move(other);
  return edit;
}

}  // namespace

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
  ImGui::InputText("##save", state.live.save_path.data(), state.live.save_path.size());
  ImGui::SameLine();
  if (ImGui::Button("save as TOML")) {
    const Status saved = edits.save_toml(state.live.save_path.data());
    state.live.save_outcome = {saved ? std::string("saved ") + state.live.save_path.data()
                                     : "not saved: " + saved.error().message,
                               !saved};
  }
  if (edit) (void)edits.submit(*edit);  // its outcome is shown below, as a script's is
  for (const live::LiveEdits::Outcome& outcome : {edits.last_outcome(), state.live.save_outcome})
    if (!outcome.text.empty())
      ImGui::TextColored(outcome.refused ? ImVec4(1, 0.4f, 0.4f, 1) : ImVec4(0.5f, 0.9f, 0.5f, 1),
                         "%s", outcome.text.c_str());
}

}  // namespace gpuoverlap::viewer
