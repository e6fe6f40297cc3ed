#include "viewer/panels.h"

namespace gpuoverlap::viewer {

nlohmann::json rect_json(ImVec2 min, ImVec2 max) { return {min.x, min.y, max.x, max.y}; }

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

void begin_whole_viewport(const char* name) {
  const ImGuiViewport* viewport = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(viewport->Pos);
  ImGui::SetNextWindowSize(viewport->Size);
  ImGui::Begin(name, nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                   ImGuiWindowFlags_NoBringToFrontOnFocus);
}

}  // namespace gpuoverlap::viewer
