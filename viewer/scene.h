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

#include "analysis/decision.h"
#include "analysis/results.h"
#include "analysis/verdict.h"
#include "layout/timeline_layout.h"
#include "scenarios/preemption_spec.h"

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
std::vector<std::string> device_lines(const ScenarioMeta& meta);

// The clocks this scenario has a value on in any ok record, in the order poll, ts, clk.
std::vector<Clock> available_clocks(const LoadedScenario& scenario);

// The overlap matrix: for each pair of workloads (a before b in the scenario's order) on
// `clock`, the ok frames that had both, in how many of them their spans overlapped, and the
// median overlap over those (µs; 0 when none did). `dependent`: one depends on the other (a
// barrier orders them, so they should never overlap).
struct OverlapCell {
  std::string a, b;
  std::size_t frames = 0, overlapped = 0;
  double overlap_p50_us = 0;
  bool dependent = false;
  bool operator==(const OverlapCell&) const = default;
};
std::vector<OverlapCell> overlap_matrix(const LoadedScenario& scenario, Clock clock);

// The overlap matrix as a grid: a row and a column per workload in the scenario's order; cell
// [i][j] (and [j][i]) indexes the pair's OverlapCell in `matrix`; nullopt on the diagonal and
// for a pair the matrix does not have.
struct OverlapGrid {
  std::vector<std::string> workloads;
  std::vector<std::vector<std::optional<std::size_t>>> cells;
};
OverlapGrid overlap_grid(const std::vector<std::string>& workloads,
                         const std::vector<OverlapCell>& matrix);

// The preemption scenarios run beside the one shown, as a grid: those whose names share its
// folder ("preemption-matrix/..."; a preset run alone: every preemption scenario at the top
// level). Rows are loads and columns priorities (", 2nd process" where the load ran in a
// second process), each in the order they first ran. Each cell's latencies are its urgent
// jobs' starts on `clock` (urgent_latencies); a miss is an urgent job that failed or ended
// later than its period. nullopt: the scenario shown is not a preemption scenario.
struct PreemptionGridCell {
  std::size_t scenario = 0;  // its index in LoadedRun::scenarios
  std::string load, priority;
  preemption::ProcessMode process = preemption::ProcessMode::same;
  std::size_t submissions = 0, misses = 0;
  std::optional<double> p50_us, p99_us;  // nullopt: no urgent start on the clock
  double period_us = 0;
};
struct PreemptionGrid {
  std::string group;  // the folder the cells share; "" for presets run alone
  Clock clock = Clock::poll;
  std::vector<std::string> loads, columns;
  std::vector<std::vector<std::optional<std::size_t>>> cells;  // [load][column] into `entries`
  std::vector<PreemptionGridCell> entries;
};
std::optional<PreemptionGrid> preemption_grid(const LoadedRun& run, std::size_t scenario,
                                              Clock clock);

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
// folder or above it, not above `root` (the folder the viewer opened), with the verdict.json
// beside it. nullopt: the scenario is in no study. An unreadable verdict.csv is an Error naming
// it; a verdict.json missing or unreadable leaves the margins at their defaults and no doses.
// Both files are read through analysis/study_files.h.
struct StudyDose {
  std::string condition;
  std::uint32_t threads = 0;
};
struct StudyVerdictTable {
  std::filesystem::path file;
  std::vector<VerdictRow> rows;                  // verdict.csv's, in its order
  double p50_margin = 0.05, tail_margin = 0.01;  // verdict.json's settings
  std::vector<StudyDose> doses;                  // the positive control's, by threads
  std::optional<std::uint32_t> detected_from_threads;
  // Per condition, where its frame time went (verdict.json's time_account line), in the file's
  // order; conditions without one are left out.
  std::vector<std::pair<std::string, std::string>> time_accounts;
};

// The rows of a forest plot: every primary endpoint, then with `with_diagnostics` each
// diagnostic that moved (its verdict other than "diagnostic: within"), per endpoint in
// verdict.csv's order, its conditions in that order. Indices into `table.rows`.
std::vector<std::size_t> forest_rows(const StudyVerdictTable& table, bool with_diagnostics);

// The control's dose-response of the median: per primary endpoint whose decision tests the
// median (`tests`), its rows at each dose in ascending threads (indices into `table.rows`).
// Empty with fewer than two doses.
struct DoseSeries {
  std::string metric;
  std::vector<std::pair<std::uint32_t, std::size_t>> points;  // threads, row
};
std::vector<DoseSeries> dose_response(const StudyVerdictTable& table);
Result<std::optional<StudyVerdictTable>> study_verdict(const std::filesystem::path& root,
                                                       const LoadedScenario& scenario);

// A run on several devices (`run --device all` or a list: docs/multi-gpu.md): its devices in
// run.json's order, each with the folder that prefixes its scenarios' names ("gpu1" of
// "gpu1/default", as analysis/results.h names them) and the device's name (run.json's
// "device"."name", "?" where missing). run.json is untrusted: an entry without a folder is left
// out. Empty for a run on one device, a lone scenario and a live run.
struct RunDevice {
  std::string folder;
  std::string name;
  bool operator==(const RunDevice&) const = default;
};
std::vector<RunDevice> run_devices(const LoadedRun& run);

// A scenario's name split at its device's folder: the device (an index into `devices`) and the
// name below the folder ("default" of "gpu1/default"); no device and the whole name where no
// device's folder prefixes it.
struct DeviceScenarioName {
  std::optional<std::size_t> device;
  std::string name;
  bool operator==(const DeviceScenarioName&) const = default;
};
DeviceScenarioName split_device(const std::vector<RunDevice>& devices, const std::string& name);

// The scenario `name` asks for (`view --scenario`): the scenario of that exact name; else, in a
// run on several devices, the first device's scenario of that name below its folder ("default"
// finds "gpu0/default"). An index into run.scenarios; nullopt: none.
std::optional<std::size_t> find_scenario(const LoadedRun& run,
                                         const std::vector<RunDevice>& devices,
                                         const std::string& name);

// The devices of a run on several devices stacked, one band per device in `devices`' order,
// each showing the scenario of the same name below its folder as `scenario` (an index into
// run.scenarios: the one chosen, on any device). Each band's timeline is `timeline_input` of
// its own scenario on `clock`, so its times are from its own device's frame start; `frame`
// where that scenario has the frame, else its medians (nullopt `frame`: the medians for all).
// A device without the scenario (it failed before it) has a band without input. Empty when
// `devices` is, and when `scenario` is below no device's folder.
struct DeviceBand {
  std::size_t device = 0;               // into `devices`
  std::string label;                    // "gpu1: NVIDIA H100 80GB HBM3"
  std::optional<std::size_t> scenario;  // into LoadedRun::scenarios; nullopt: not on this device
  std::optional<std::uint32_t> frame;   // the frame shown; nullopt: the medians
  bool has_clock = false;               // the scenario has a value on `clock`
  std::optional<layout::TimelineInput> input;  // nullopt where there is no scenario
};
std::vector<DeviceBand> device_bands(const LoadedRun& run, const std::vector<RunDevice>& devices,
                                     std::size_t scenario, Clock clock,
                                     std::optional<std::uint32_t> frame);

// One time range for every band (a shared time axis): layout::fit over all their workloads.
layout::View fit_bands(const std::vector<DeviceBand>& bands, layout::View view);

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
