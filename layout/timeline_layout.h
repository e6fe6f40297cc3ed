// The viewer's timeline as geometry: a pure function from what one frame (or a statistic over
// frames) measured to lanes, bars, whiskers, dependency arrows, labels and time ticks, in
// pixels. No window, no ImGui: the viewer draws what this returns, and tests check it without a
// display (tests/unit/timeline_layout_test.cpp).
//
// Contract: times are µs on one clock, from the frame's gate release (as records.csv has them);
// pixels grow right and down from the layout's origin (0, 0). The input is plain data the caller
// built from a results folder or a live frame; nothing here reads files.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpuoverlap::layout {

struct QueueLane {
  std::string name;   // the scenario's queue name
  std::string label;  // what the lane header says: "direct (DIRECT)", "async (COMPUTE, high)"
  bool operator==(const QueueLane&) const = default;
};

struct WorkloadTiming {
  std::string name;
  std::string queue;  // QueueLane::name
  bool graphics = false;
  // The span drawn as the bar: the frame shown, or a statistic (p50 start to p50 end). Empty
  // when the clock has no value for it: the lane is drawn, the bar is not.
  std::optional<double> start_us, end_us;
  // The whisker: p5 of the start to p95 of the end over every frame. Empty: none drawn.
  std::optional<double> whisker_start_us, whisker_end_us;
  bool flagged = false;  // its clocks disagree in the frame shown (records.csv flags)
  // The frame shown, on the poll clock: each stamp's detection window and whether one was
  // disturbed (records.csv poll_*_window_us, poll_disturbed). Empty otherwise.
  std::optional<double> start_window_us, end_window_us;
  bool disturbed = false;
  // A lane of background work (a compile thread), not a GPU workload: drawn in its own colour,
  // with `detail` (what ran, where, and what it cost the thread) in the hover text.
  bool background = false;
  std::string detail;
  // A lane of a CPU thread's states by the kernel's record (run --sched-trace), not a GPU
  // workload: "runnable" (ready, no CPU) or "asleep"; its bars are `segments`, each a stretch,
  // drawn without labels. Empty: a workload or a compile thread.
  std::string cpu_state;
  std::vector<std::pair<double, double>> segments;  // start and end, µs, like start_us
  bool operator==(const WorkloadTiming&) const = default;
};

struct DependencyEdge {
  std::string producer, consumer;  // WorkloadTiming::name
  std::string barrier;             // "legacy", "split", "enhanced", ... as records.csv has it
  bool operator==(const DependencyEdge&) const = default;
};

struct TimelineInput {
  std::vector<QueueLane> queues;          // in the scenario's order
  std::vector<WorkloadTiming> workloads;  // in the scenario's order
  std::vector<DependencyEdge> dependencies;
  bool operator==(const TimelineInput&) const = default;
};

struct View {
  double width_px = 1200;
  double begin_us = 0, end_us = 1000;  // the visible time range (zoom and pan)
  double label_width_px = 180;         // the lane labels' column, left of the time axis
  double axis_height_px = 22;          // the ticks' row, on top
  double queue_header_px = 20;
  double lane_height_px = 24;
  double min_tick_spacing_px = 70;
  double char_width_px = 7;  // for deciding whether a bar's label fits in it
};

struct Rect {
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;
};

struct LaneBox {
  Rect rect;
  std::string label;
  bool queue_header = false;  // a queue's header row, above its workloads' lanes
  std::size_t index = 0;      // into queues (header) or workloads (lane)
};

struct Bar {
  Rect rect;  // clipped to the visible time range
  std::size_t workload = 0;
  std::string label;      // "name 12.3 us"; empty when it does not fit in the bar
  bool graphics = false;  // drawn differently from dispatches
  bool flagged = false;
};

struct Whisker {
  double x0 = 0, x1 = 0, y = 0;
  std::size_t workload = 0;
};

struct Arrow {
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;  // producer end to consumer start
  std::size_t producer = 0, consumer = 0;
  bool split = false;  // a split barrier (drawn dashed)
  std::string barrier;
};

struct Tick {
  double x = 0;
  double time_us = 0;
  std::string label;  // "250 us", "1.5 ms"
};

struct TimelineLayout {
  std::vector<LaneBox> lanes;  // headers and workload lanes, top to bottom
  std::vector<Bar> bars;
  std::vector<Whisker> whiskers;
  std::vector<Arrow> arrows;
  std::vector<Tick> ticks;
  double height_px = 0;
};

// The step between ticks for `span_us` over `width_px`: 1, 2 or 5 times a power of ten, the
// smallest that keeps ticks at least `min_spacing_px` apart.
double tick_step_us(double span_us, double width_px, double min_spacing_px);

// "250 us", "1.5 ms", "2 s": the unit chosen by the step's size.
std::string format_time(double time_us, double step_us);

// A range that shows every bar and whisker, with 3 % to spare on each side; [0, 1] when there
// is nothing to show.
View fit(const TimelineInput& input, View view);

// Workloads whose queue is not among `queues` get no lane; dependencies that name an unknown
// workload get no arrow. Bars outside the visible range are left out; bars partly inside are
// clipped.
TimelineLayout layout_timeline(const TimelineInput& input, const View& view);

}  // namespace gpuoverlap::layout
