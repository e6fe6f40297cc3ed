// What the barrier lab reads off a run: per dependency, the gap from the producer's end to
// the consumer's start (what the barrier and the queue cost between them), and per pair of
// workloads, how much they overlapped. Both per clock (poll, ts, clk), over the ok frames.
// Written as dependencies.csv and overlap.csv next to records.csv; the columns are the
// documented contract (docs/barriers.md): append, never reorder.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "timeline/records.h"

namespace gpuoverlap {

// The poll clock's rows leave out frames with a disturbed stamp (`disturbed_frames`, records.h)
// and give the p50 gap's bounds from the detection windows: each frame's true gap lies in
// [gap - the consumer start's window, gap + the producer end's window], so the true p50 lies in
// [gap_p50_low_us, gap_p50_high_us]. Empty on the other clocks.
inline constexpr std::array<std::string_view, 17> kDependencyColumns = {
    "scenario",       "producer",       "consumer",   "barrier",      "cross_queue",
    "d3d12",          "clock",          "frames",     "gap_p5_us",    "gap_p50_us",
    "gap_p95_us",     "gap_min_us",     "gap_max_us", "early_frames", "disturbed_frames",
    "gap_p50_low_us", "gap_p50_high_us"};

inline constexpr std::array<std::string_view, 11> kOverlapColumns = {
    "scenario", "workload_a",        "workload_b",  "same_queue",  "relation",        "clock",
    "frames",   "overlapped_frames", "overlap_p50", "overlap_max", "disturbed_frames"};

struct DependencyGapRow {
  std::size_t consumer = 0, index = 0;  // workload and its depends_on entry
  Clock clock = Clock::poll;
  std::size_t frames = 0;           // frames where both ends have this clock
  std::optional<double> gap_us[3];  // p5, p50, p95 of consumer start - producer end
  std::optional<double> gap_min_us, gap_max_us;
  std::size_t early_frames = 0;  // consumer started before its producer ended (gap < 0)
  std::optional<std::size_t> disturbed_frames;            // poll clock only
  std::optional<double> gap_p50_low_us, gap_p50_high_us;  // poll clock, from the windows
};

// relation: "dependent" when one reaches the other through depends_on (directly or not),
// else "independent". overlap = time both ran / the shorter one's duration, per frame.
struct OverlapRow {
  std::size_t a = 0, b = 0;  // a < b
  bool same_queue = false;
  bool dependent = false;
  Clock clock = Clock::poll;
  std::size_t frames = 0;
  std::size_t overlapped_frames = 0;  // frames with overlap > 0
  std::optional<double> overlap_p50, overlap_max;
  std::optional<std::size_t> disturbed_frames;  // poll clock only
};

std::vector<DependencyGapRow> dependency_gaps(const Scenario& scenario,
                                              const ScenarioTimeline& timeline);
std::vector<OverlapRow> pairwise_overlap(const Scenario& scenario,
                                         const ScenarioTimeline& timeline);

std::string dependencies_csv(const Scenario& scenario, const std::vector<DependencyGapRow>& rows);
std::string overlap_csv(const Scenario& scenario, const std::vector<OverlapRow>& rows);

}  // namespace gpuoverlap
