#include <fmt/format.h>

#include "viewer/panels.h"
#include "viewer/screenshot_sidecar.h"

namespace gpuoverlap::viewer {

// A run on several devices: the scenario shown on every device, a band per device one above
// the other on one time range (zoom and pan move them all), each headed by its device's folder
// and name and what it shows. Returns the chosen scenario's band as drawn (the sidecar's
// "bars"); every band goes to `state.devices.drawn` (the sidecar's "devices").
layout::TimelineLayout draw_device_bands(ViewState& state) {
  layout::TimelineLayout chosen;
  state.devices.drawn = nlohmann::json::array();
  const std::optional<std::uint32_t> asked = frame_asked(state);
  const std::string clock(to_string(state.clock));
  const float band_px = state.devices.bands.size() > 1 ? 100 : 240;
  for (std::size_t b = 0; b < state.devices.bands.size(); ++b) {
    const DeviceBand& band = state.devices.bands[b];
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
        {{"folder", state.devices.list[band.device].folder},
         {"device", state.devices.list[band.device].name},
         {"label", band.label},
         {"text", shows},
         {"scenario", band.scenario ? nlohmann::json(state.run.scenarios[*band.scenario].name)
                                    : nlohmann::json(nullptr)},
         {"chosen", band.scenario == state.scenario},
         {"frame", band.frame ? nlohmann::json(*band.frame) : nlohmann::json(nullptr)},
         {"clock", clock},
         {"has_clock", band.has_clock},
         {"rect", {top.x, top.y, bottom.x, bottom.y}}});
    state.devices.drawn.push_back(std::move(drawn_json));
  }
  return chosen;
}

}  // namespace gpuoverlap::viewer
