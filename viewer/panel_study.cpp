#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>

#include "viewer/panels.h"

namespace gpuoverlap::viewer {

namespace {

// What a verdict.csv row says, for the screen and the sidecar ("?" where it named none).
std::string decision_text(std::optional<Decision> decision) {
  return decision ? std::string(to_string(*decision)) : std::string("?");
}

ImU32 verdict_colour(std::optional<Decision> decision, bool primary) {
  if (!primary) return rgba(150, 150, 150);
  if (decision == Decision::intrusive) return rgba(230, 80, 70);
  if (decision == Decision::non_intrusive) return rgba(90, 200, 110);
  return rgba(230, 190, 80);  // inconclusive
}

// A value axis drawn over [px0, px1] (x or y) for values in [low, high], linear or log.
struct Axis {
  float px0 = 0, px1 = 1;
  double low = 0, high = 1;
  bool log_scale = false;
  double fraction(double v) const {
    return log_scale ? std::log(std::max(v, 1e-12) / low) / std::log(high / low)
                     : (v - low) / (high - low);
  }
  bool outside(double v) const { return fraction(v) < 0 || fraction(v) > 1; }
  float at(double v) const {
    return px0 + static_cast<float>(std::clamp(fraction(v), 0.0, 1.0)) * (px1 - px0);
  }
};

// The range that holds `values` and the margin band, widened a little; on a log axis only
// values above zero count.
Axis axis_over(const std::vector<double>& values, double band_low, double band_high,
               bool log_scale) {
  Axis axis{0, 1, band_low, band_high, log_scale};
  for (double v : values)
    if (std::isfinite(v) && (!log_scale || v > 0))
      axis.low = std::min(axis.low, v), axis.high = std::max(axis.high, v);
  if (log_scale) {
    axis.low /= 1.03, axis.high *= 1.03;
  } else {
    const double pad = 0.05 * (axis.high - axis.low);
    axis.low -= pad, axis.high += pad;
  }
  return axis;
}

// One effect with its interval at height y; a value beyond the axis is drawn at its edge as
// an arrow head pointing out. Returns the point's x, or nullopt where there is no value.
std::optional<float> draw_effect(ImDrawList* draw, const Axis& axis, float y,
                                 const std::optional<double>& value,
                                 const std::optional<double>& interval_low,
                                 const std::optional<double>& interval_high, ImU32 colour) {
  if (!value) return std::nullopt;
  draw->AddLine(ImVec2(axis.at(interval_low.value_or(*value)), y),
                ImVec2(axis.at(interval_high.value_or(*value)), y), colour, 2.0f);
  const float x = axis.at(*value);
  if (axis.outside(*value)) {
    const float out = axis.fraction(*value) > 1 ? 1.0f : -1.0f;
    draw->AddTriangleFilled(ImVec2(x + 6 * out, y), ImVec2(x, y - 5), ImVec2(x, y + 5), colour);
  } else {
    draw->AddCircleFilled(ImVec2(x, y), 4.0f, colour);
  }
  return x;
}

// The margin band and the no-effect line of one forest panel, its frame and its title.
void draw_panel(ImDrawList* draw, const Axis& axis, float title_y, float top, float bottom,
                double band_low, double band_high, double no_effect, const std::string& title) {
  draw->AddRectFilled(ImVec2(axis.at(band_low), top), ImVec2(axis.at(band_high), bottom),
                      rgba(60, 110, 70, 90));
  draw->AddLine(ImVec2(axis.at(no_effect), top), ImVec2(axis.at(no_effect), bottom),
                rgba(200, 200, 200), 1.0f);
  draw->AddRect(ImVec2(axis.px0 - 4, top), ImVec2(axis.px1 + 4, bottom), rgba(90, 94, 102));
  draw->PushClipRect(ImVec2(axis.px0, title_y), ImVec2(axis.px1, top), true);
  draw->AddText(ImVec2(axis.px0, title_y), rgba(210, 210, 210), title.c_str());
  draw->PopClipRect();
}

}  // namespace

// A study's forest plot: per endpoint and condition, the median's ratio to the baseline (log
// axis, left) and the tail's excess (points of frames, right), each with its interval against
// the margin band; primary endpoints coloured by their decision, and with the box ticked the
// diagnostics that moved, in grey (they never decide).
void draw_forest(ViewState& state) {
  const StudyVerdictTable& table = *state.study.verdict;
  ImGui::Checkbox("with the diagnostics that moved", &state.study.forest_diagnostics);
  const std::vector<std::size_t> rows = forest_rows(table, state.study.forest_diagnostics);
  if (rows.empty()) return;
  std::vector<double> ratios, tails;  // the primary endpoints set the scales
  for (std::size_t i : rows) {
    const VerdictRow& r = table.rows[i];
    if (r.role != EndpointRole::primary) continue;
    for (const auto& v : {r.ratio_p50, r.ci_low, r.ci_high})
      if (v && tests_median(r.tests)) ratios.push_back(*v);
    for (const auto& v : {r.tail_excess, r.tail_ci_low, r.tail_ci_high})
      if (v && tests_tail(r.tests)) tails.push_back(*v);
  }
  Axis median = axis_over(ratios, 1 - 2 * table.p50_margin, 1 + 2 * table.p50_margin, true);
  Axis tail = axis_over(tails, -2 * table.tail_margin, 2 * table.tail_margin, false);
  auto label_of = [](const VerdictRow& r) {
    return r.metric + " · " + r.condition +
           ((r.role == EndpointRole::primary) ? "" : " (diagnostic)");
  };
  float label_px = 0;
  for (std::size_t i : rows)
    label_px = std::max(label_px, ImGui::CalcTextSize(label_of(table.rows[i]).c_str()).x + 10);
  const float line = ImGui::GetTextLineHeight();
  const float row_h = line + 4, width = ImGui::GetContentRegionAvail().x, gap_px = 48;
  const float panel = std::max(120.0f, (width - label_px - gap_px - 8) / 2);
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float top = origin.y + line + 6, bottom = top + row_h * static_cast<float>(rows.size());
  median.px0 = origin.x + label_px + 4, median.px1 = median.px0 + panel;
  tail.px0 = median.px1 + gap_px, tail.px1 = tail.px0 + panel;
  draw_panel(draw, median, origin.y, top, bottom, 1 - table.p50_margin, 1 + table.p50_margin, 1.0,
             fmt::format("median ratio, log {:.3g} to {:.3g}; band ±{:.0f} %", median.low,
                         median.high, 100 * table.p50_margin));
  draw_panel(draw, tail, origin.y, top, bottom, -table.tail_margin, table.tail_margin, 0.0,
             fmt::format("tail excess, points {:+.1f} to {:+.1f}; band ±{:.1f}", 100 * tail.low,
                         100 * tail.high, 100 * table.tail_margin));
  nlohmann::json drawn = nlohmann::json::array();
  std::string previous_metric;
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const VerdictRow& r = table.rows[rows[k]];
    const float y = top + row_h * (static_cast<float>(k) + 0.5f);
    if (k > 0 && r.metric != previous_metric)  // endpoints apart
      draw->AddLine(ImVec2(origin.x, y - row_h / 2), ImVec2(tail.px1, y - row_h / 2),
                    rgba(70, 74, 82));
    previous_metric = r.metric;
    const ImU32 colour = verdict_colour(r.decision, r.role == EndpointRole::primary);
    draw->AddText(ImVec2(origin.x, y - line / 2), colour, label_of(r).c_str());
    const auto median_x = tests_median(r.tests) ? draw_effect(draw, median, y, r.ratio_p50,
                                                              r.ci_low, r.ci_high, colour)
                                                : std::nullopt;
    const auto tail_x = tests_tail(r.tests) ? draw_effect(draw, tail, y, r.tail_excess,
                                                          r.tail_ci_low, r.tail_ci_high, colour)
                                            : std::nullopt;
    auto x_json = [](const std::optional<float>& x) {
      return x ? nlohmann::json(*x) : nlohmann::json(nullptr);
    };
    drawn.push_back({{"condition", r.condition},
                     {"metric", r.metric},
                     {"primary", r.role == EndpointRole::primary},
                     {"verdict", decision_text(r.decision)},
                     {"y", y},
                     {"median_x", x_json(median_x)},
                     {"tail_x", x_json(tail_x)}});
  }
  ImGui::Dummy(ImVec2(width, bottom - origin.y + 6));
  state.grids_drawn["forest"] = {{"rows", drawn},
                                 {"diagnostics", state.study.forest_diagnostics},
                                 {"median_axis", {median.px0, median.px1, median.low, median.high}},
                                 {"tail_axis", {tail.px0, tail.px1, tail.low, tail.high}}};
}

// Where each condition's frame time went (analysis/time_account.h), a line per condition.
void draw_time_accounts(ViewState& state) {
  const StudyVerdictTable& table = *state.study.verdict;
  if (table.time_accounts.empty()) return;
  ImGui::TextUnformatted("Where the time went, against the baseline:");
  nlohmann::json drawn = nlohmann::json::array();
  for (const auto& [condition, line] : table.time_accounts) {
    ImGui::TextWrapped("%s: %s", condition.c_str(), line.c_str());
    drawn.push_back({{"condition", condition}, {"line", line}});
  }
  state.grids_drawn["time_accounts"] = drawn;
}

// The positive control's dose-response: each primary endpoint's median ratio (log) against the
// control's threads (log 2), with its interval; a filled point is a dose detected. The legend
// is beside the plot, never on it.
void draw_dose_response(ViewState& state) {
  const StudyVerdictTable& table = *state.study.verdict;
  const std::vector<DoseSeries> series = dose_response(table);
  if (series.empty()) return;
  std::vector<double> ratios;
  for (const DoseSeries& d : series)
    for (const auto& [threads, row] : d.points)
      for (const auto& v :
           {table.rows[row].ratio_p50, table.rows[row].ci_low, table.rows[row].ci_high})
        if (v) ratios.push_back(*v);
  ImGui::Text(
      "The positive control: the median ratio of each primary endpoint against the "
      "control's normal-priority threads%s",
      table.detected_from_threads
          ? fmt::format(" (detected from {} thread{})", *table.detected_from_threads,
                        *table.detected_from_threads == 1 ? "" : "s")
                .c_str()
          : " (not detected)");
  const float line = ImGui::GetTextLineHeight();
  float legend_px = 0;
  for (const DoseSeries& d : series)
    legend_px = std::max(legend_px, ImGui::CalcTextSize(d.metric.c_str()).x + 24);
  const float width = std::min(ImGui::GetContentRegionAvail().x, 760.0f), height = 200;
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  Axis y = axis_over(ratios, 1 - 2 * table.p50_margin, 1 + 2 * table.p50_margin, true);
  y.px0 = origin.y + height - line - 6, y.px1 = origin.y + 4;  // upwards
  const Axis x{origin.x + 60, origin.x + width - legend_px - 20,
               static_cast<double>(table.doses.front().threads),
               static_cast<double>(table.doses.back().threads), true};
  draw->AddRect(ImVec2(x.px0 - 6, y.px1), ImVec2(x.px1 + 6, y.px0), rgba(90, 94, 102));
  draw->AddRectFilled(ImVec2(x.px0 - 6, y.at(1 + table.p50_margin)),
                      ImVec2(x.px1 + 6, y.at(1 - table.p50_margin)), rgba(60, 110, 70, 90));
  for (double tick : {y.low, 1.0, y.high})
    draw->AddText(ImVec2(origin.x, y.at(tick) - line / 2), rgba(200, 200, 200),
                  fmt::format("{:.4g}", tick).c_str());
  for (const StudyDose& dose : table.doses)
    draw->AddText(ImVec2(x.at(dose.threads) - 4, y.px0 + 3), rgba(200, 200, 200),
                  std::to_string(dose.threads).c_str());
  static constexpr int kPalette[][3] = {{90, 160, 230},  {240, 150, 60}, {120, 200, 120},
                                        {220, 100, 180}, {200, 200, 90}, {150, 120, 230}};
  nlohmann::json drawn = nlohmann::json::array();
  for (std::size_t m = 0; m < series.size(); ++m) {
    const int* rgb = kPalette[m % std::size(kPalette)];
    const ImU32 colour = rgba(rgb[0], rgb[1], rgb[2]);
    std::optional<ImVec2> previous;
    nlohmann::json points = nlohmann::json::array();
    for (const auto& [threads, row] : series[m].points) {
      const VerdictRow& r = table.rows[row];
      if (!r.ratio_p50) continue;
      const ImVec2 at(x.at(threads), y.at(*r.ratio_p50));
      draw->AddLine(ImVec2(at.x, y.at(r.ci_low.value_or(*r.ratio_p50))),
                    ImVec2(at.x, y.at(r.ci_high.value_or(*r.ratio_p50))), colour, 1.5f);
      if (previous) draw->AddLine(*previous, at, colour, 1.0f);
      if (r.decision == Decision::intrusive)
        draw->AddCircleFilled(at, 4.5f, colour);
      else
        draw->AddCircle(at, 4.5f, colour, 0, 1.5f);
      previous = at;
      points.push_back(
          {{"threads", threads}, {"ratio_p50", *r.ratio_p50}, {"x", at.x}, {"y", at.y}});
    }
    const ImVec2 key(x.px1 + 20, y.px1 + (line + 4) * static_cast<float>(m));
    draw->AddLine(ImVec2(key.x, key.y + line / 2), ImVec2(key.x + 14, key.y + line / 2), colour,
                  2.0f);
    draw->AddText(ImVec2(key.x + 18, key.y), colour, series[m].metric.c_str());
    drawn.push_back({{"metric", series[m].metric}, {"points", points}});
  }
  ImGui::Dummy(ImVec2(width, height));
  state.grids_drawn["dose_response"] = drawn;
}

void draw_verdict(const ViewState& state) {
  if (!state.study.error.empty()) {
    ImGui::TextColored(ImVec4(1, 0.4f, 0.4f, 1), "%s", state.study.error.c_str());
    return;
  }
  if (!state.study.verdict) return;
  ImGui::TextUnformatted(state.study.verdict->file.string().c_str());
  if (!ImGui::BeginTable("verdict", 6, ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg)) return;
  for (const char* column :
       {"condition", "metric", "median ratio [bounds]", "tail excess", "verdict", "pairing"})
    ImGui::TableSetupColumn(column);
  ImGui::TableHeadersRow();
  auto number = [](const std::optional<double>& v, const char* format) {
    return v ? fmt::format(fmt::runtime(format), *v) : std::string("-");
  };
  for (const VerdictRow& row : state.study.verdict->rows) {
    ImGui::TableNextRow();
    if (row.decision == Decision::intrusive)
      ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg0, rgba(110, 40, 40));
    else if (row.decision == Decision::non_intrusive)
      ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg0, rgba(40, 90, 50));
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(row.condition.c_str());
    ImGui::TableNextColumn();
    ImGui::Text("%s%s", row.metric.c_str(),
                (row.role == EndpointRole::primary) ? "" : " (diagnostic)");
    ImGui::TableNextColumn();
    ImGui::Text("%s [%s, %s]", number(row.ratio_p50, "{:.4f}").c_str(),
                number(row.ci_low, "{:.4f}").c_str(), number(row.ci_high, "{:.4f}").c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(number(row.tail_excess, "{:+.4f}").c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(decision_text(row.decision).c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(row.pairing.c_str());
  }
  ImGui::EndTable();
}

}  // namespace gpuoverlap::viewer
