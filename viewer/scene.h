// What the viewer shows of one scenario, built from results read by analysis/results.h (the
// readers `report` and `compare` use): the timeline input of one frame or of the medians over
// every frame, the frame-time history, and the device lines. Pure: no window, no ImGui, so it is
// tested without a display (tests/unit/viewer_scene_test.cpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "analysis/results.h"
#include "layout/timeline_layout.h"

namespace gpuoverlap::viewer {

// The frames of a scenario that have at least one record, ascending.
std::vector<std::uint32_t> frame_numbers(const LoadedScenario& scenario);

// The timeline of frame `frame` on `clock`; with no frame, the medians over every ok frame
// (bars from the p50 start to the p50 end). Either way each workload's whisker runs from the p5
// of its starts to the p95 of its ends over every ok frame. Lanes come from meta.json's queues
// (type and granted priority in the label), or from the records where meta has none.
layout::TimelineInput timeline_input(const LoadedScenario& scenario, Clock clock,
                                     std::optional<std::uint32_t> frame);

// Per frame, the span from its first workload's start to its last workload's end on `clock`
// (ok records only): the history strip. Frames without a value on the clock are left out.
struct FrameSpan {
  std::uint32_t frame = 0;
  double span_us = 0;
  bool operator==(const FrameSpan&) const = default;
};
std::vector<FrameSpan> frame_spans(const LoadedScenario& scenario, Clock clock);

// The lines always on screen: the device and driver, and each queue with its family, type and
// the priority requested and granted.
std::vector<std::string> device_lines(const nlohmann::json& meta);

// The clocks this scenario has a value on in any ok record, in the order poll, ts, clk.
std::vector<Clock> available_clocks(const LoadedScenario& scenario);

// The overlap matrix: for each pair of workloads (a before b in the scenario's order) on
// `clock`, the ok frames that had both, in how many of them their spans overlapped, and the
// median overlap over those (µs; 0 when none did).
struct OverlapCell {
  std::string a, b;
  std::size_t frames = 0, overlapped = 0;
  double overlap_p50_us = 0;
  bool operator==(const OverlapCell&) const = default;
};
std::vector<OverlapCell> overlap_matrix(const LoadedScenario& scenario, Clock clock);

// A preemption scenario (meta.json has "preemption"): each measured urgent submission's
// latency on `clock` (its start, which is measured from its submit: preemption_analysis.h), in
// submission order with its submit time, and a histogram of them in `bins` equal bins from 0
// to the largest. Empty for other scenarios.
struct LatencyPoint {
  std::uint32_t submission = 0;
  std::optional<double> submit_ms;  // from the first measured submission
  double latency_us = 0;
};
struct UrgentLatencies {
  std::vector<LatencyPoint> points;
  std::vector<std::size_t> histogram;
  double bin_us = 0;
};
UrgentLatencies urgent_latencies(const LoadedScenario& scenario, Clock clock,
                                 std::size_t bins = 30);

// The verdict of the study a scenario belongs to: the nearest verdict.csv in the scenario's
// folder or above it, not above `root` (the folder the viewer opened). nullopt: the scenario is
// in no study. An unreadable verdict.csv is an Error naming it.
struct VerdictRowText {
  std::string condition, metric, ratio_p50, ci_low, ci_high, tail_excess, verdict, pairing;
};
struct StudyVerdictTable {
  std::filesystem::path file;
  std::vector<VerdictRowText> rows;
};
Result<std::optional<StudyVerdictTable>> study_verdict(const std::filesystem::path& root,
                                                       const LoadedScenario& scenario);

// The scenario list as a tree: names split at '/' (a study's "study/condition/round-r", a
// matrix's "matrix/cell"), groups in the order their first scenario ran. A leaf names the
// scenario by its index in the run; a group has none.
struct ScenarioTreeNode {
  std::string label;                    // this level's part of the name
  std::optional<std::size_t> scenario;  // a leaf: its index in LoadedRun::scenarios
  std::vector<ScenarioTreeNode> children;
  std::size_t leaves() const;  // the scenarios at or below this node
  bool contains(std::size_t scenario_index) const;
};
std::vector<ScenarioTreeNode> scenario_tree(const std::vector<std::string>& names);

}  // namespace gpuoverlap::viewer
