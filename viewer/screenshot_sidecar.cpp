#include "viewer/screenshot_sidecar.h"

#include <GL/gl.h>

#include <algorithm>
#include <vector>

#include "core/atomic_file.h"
#include "viewer/png_image.h"

namespace gpuoverlap::viewer {

namespace {

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

}  // namespace

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
  if (state.compare) {
    nlohmann::json b_bars = nlohmann::json::array();
    if (state.compare->input)
      for (const layout::Bar& b : state.compare->drawn.bars)
        b_bars.push_back({{"workload", state.compare->input->workloads[b.workload].name},
                          {"rect", rect(b.rect)}});
    std::size_t rows = 0, changed = 0;
    for (const CompareRow& row : state.compare->result->rows)
      if (row.scenario == compare_unit(state.run.scenarios[state.scenario]))
        ++rows, changed += row.outcome != CompareOutcome::ok;
    second = {{"directory", state.compare->directory.string()},
              {"has_scenario", state.compare->input.has_value()},
              {"bars", b_bars},
              {"compare_method", to_string(state.compare->result->method)},
              {"compare_rows", rows},
              {"compare_changed", changed}};
  }
  nlohmann::json latency = nullptr;
  if (!state.latencies.points.empty())
    latency = {{"points", state.latencies.points.size()},
               {"histogram", state.latencies.histogram},
               {"bin_us", state.latencies.bin_us}};
  nlohmann::json verdict = nullptr;
  if (state.study.verdict)
    verdict = {{"file", state.study.verdict->file.string()},
               {"rows", state.study.verdict->rows.size()}};
  else if (!state.study.error.empty())
    verdict = {{"error", state.study.error}};
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
      {"devices", state.devices.bands.empty() ? nlohmann::json(nullptr) : state.devices.drawn},
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

}  // namespace gpuoverlap::viewer
