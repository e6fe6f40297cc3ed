#include "layout/timeline_layout.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace gpuoverlap::layout {

double tick_step_us(double span_us, double width_px, double min_spacing_px) {
  if (!(span_us > 0) || !(width_px > 0) || !(min_spacing_px > 0)) return 1;
  const double minimum_us = span_us * min_spacing_px / width_px;
  double power = std::pow(10.0, std::floor(std::log10(minimum_us)));
  for (;;) {
    for (double factor : {1.0, 2.0, 5.0})
      if (factor * power >= minimum_us) return factor * power;
    power *= 10;
  }
}

std::string format_time(double time_us, double step_us) {
  // Enough decimals to tell two ticks apart, none beyond.
  auto decimals = [](double step) {
    return step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
  };
  if (std::abs(time_us) < 1e-9) time_us = 0;
  if (step_us >= 1e6) return fmt::format("{:.{}f} s", time_us / 1e6, decimals(step_us / 1e6));
  if (step_us >= 1e3) return fmt::format("{:.{}f} ms", time_us / 1e3, decimals(step_us / 1e3));
  return fmt::format("{:.{}f} us", time_us, decimals(step_us));
}

View fit(const TimelineInput& input, View view) {
  double low = std::numeric_limits<double>::infinity(), high = -low;
  for (const WorkloadTiming& w : input.workloads)
    for (const std::optional<double>& t :
         {w.start_us, w.end_us, w.whisker_start_us, w.whisker_end_us})
      if (t && std::isfinite(*t)) low = std::min(low, *t), high = std::max(high, *t);
  if (!(low <= high)) {
    view.begin_us = 0, view.end_us = 1;
    return view;
  }
  const double margin = std::max((high - low) * 0.03, 0.5);
  view.begin_us = low - margin;
  view.end_us = high + margin;
  return view;
}

TimelineLayout layout_timeline(const TimelineInput& input, const View& view) {
  TimelineLayout out;
  const double axis_x0 = view.label_width_px, axis_x1 = std::max(view.width_px, axis_x0 + 1);
  const double span_us = view.end_us > view.begin_us ? view.end_us - view.begin_us : 1;
  auto x_of = [&](double t_us) {
    return axis_x0 + (t_us - view.begin_us) / span_us * (axis_x1 - axis_x0);
  };

  const double step = tick_step_us(span_us, axis_x1 - axis_x0, view.min_tick_spacing_px);
  for (double t = std::ceil(view.begin_us / step) * step; t <= view.end_us + step * 1e-9; t += step)
    out.ticks.push_back({x_of(t), t, format_time(t, step)});

  // Lanes: each queue's header, then a lane per workload of that queue, in scenario order.
  std::vector<std::optional<Rect>> lane_of(input.workloads.size());
  double y = view.axis_height_px;
  for (std::size_t q = 0; q < input.queues.size(); ++q) {
    out.lanes.push_back(
        {{0, y, axis_x1, y + view.queue_header_px}, input.queues[q].label, true, q});
    y += view.queue_header_px;
    for (std::size_t w = 0; w < input.workloads.size(); ++w) {
      if (input.workloads[w].queue != input.queues[q].name) continue;
      const Rect lane{0, y, axis_x1, y + view.lane_height_px};
      lane_of[w] = lane;
      out.lanes.push_back({lane, input.workloads[w].name, false, w});
      y += view.lane_height_px;
    }
  }
  out.height_px = y;

  // Bars and whiskers. A bar keeps a 3 px inset from its lane's edges so lanes stay apart.
  std::vector<std::optional<Rect>> bar_of(input.workloads.size());
  for (std::size_t w = 0; w < input.workloads.size(); ++w) {
    const WorkloadTiming& timing = input.workloads[w];
    if (!lane_of[w]) continue;
    const Rect lane = *lane_of[w];
    const double mid = (lane.y0 + lane.y1) / 2;
    if (timing.whisker_start_us && timing.whisker_end_us &&
        *timing.whisker_end_us >= view.begin_us && *timing.whisker_start_us <= view.end_us)
      out.whiskers.push_back({std::max(x_of(*timing.whisker_start_us), axis_x0),
                              std::min(x_of(*timing.whisker_end_us), axis_x1), mid, w});
    // A CPU thread's stretches: a bar each, clipped, never labelled (too many, too short).
    for (const auto& [from_us, to_us] : timing.segments) {
      if (to_us < view.begin_us || from_us > view.end_us) continue;
      Bar bar;
      bar.rect = Rect{std::max(x_of(from_us), axis_x0), lane.y0 + 3, std::min(x_of(to_us), axis_x1),
                      lane.y1 - 3};
      bar.rect.x1 = std::max(bar.rect.x1, bar.rect.x0 + 1);  // a stretch of a microsecond shows
      bar.workload = w;
      out.bars.push_back(std::move(bar));
    }
    if (!timing.start_us || !timing.end_us) continue;
    // The unclipped rectangle anchors the arrows even when the bar is out of view.
    bar_of[w] = Rect{x_of(*timing.start_us), lane.y0 + 3, x_of(*timing.end_us), lane.y1 - 3};
    if (*timing.end_us < view.begin_us || *timing.start_us > view.end_us) continue;
    Bar bar;
    bar.rect = *bar_of[w];
    bar.rect.x0 = std::max(bar.rect.x0, axis_x0);
    bar.rect.x1 = std::max(std::min(bar.rect.x1, axis_x1), bar.rect.x0);
    bar.workload = w;
    bar.graphics = timing.graphics;
    bar.flagged = timing.flagged;
    const std::string label =
        fmt::format("{} {:.1f} us", timing.name, *timing.end_us - *timing.start_us);
    if (static_cast<double>(label.size()) * view.char_width_px + 6 <= bar.rect.x1 - bar.rect.x0)
      bar.label = label;
    out.bars.push_back(std::move(bar));
  }

  // Arrows from the producer's end to the consumer's start.
  auto index_of = [&](const std::string& name) -> std::optional<std::size_t> {
    for (std::size_t w = 0; w < input.workloads.size(); ++w)
      if (input.workloads[w].name == name) return w;
    return std::nullopt;
  };
  for (const DependencyEdge& edge : input.dependencies) {
    const auto producer = index_of(edge.producer), consumer = index_of(edge.consumer);
    if (!producer || !consumer || !bar_of[*producer] || !bar_of[*consumer]) continue;
    const Rect& p = *bar_of[*producer];
    const Rect& c = *bar_of[*consumer];
    out.arrows.push_back({p.x1, (p.y0 + p.y1) / 2, c.x0, (c.y0 + c.y1) / 2, *producer, *consumer,
                          edge.barrier.find("split") != std::string::npos, edge.barrier});
  }
  return out;
}

}  // namespace gpuoverlap::layout
