#include "timeline/dependency_analysis.h"

#include <algorithm>
#include <map>

#include "scenarios/frame_plan.h"
#include "scenarios/scenario.h"
#include "timeline/export.h"
#include "timeline/statistics.h"

namespace gpuoverlap {

namespace {

// Ok records by (frame, workload).
std::map<std::pair<std::uint32_t, std::size_t>, const WorkloadFrameRecord*> index_ok(
    const ScenarioTimeline& timeline) {
  std::map<std::pair<std::uint32_t, std::size_t>, const WorkloadFrameRecord*> by_key;
  for (const auto& r : timeline.records)
    if (r.status == RecordStatus::ok) by_key[{r.frame, r.workload}] = &r;
  return by_key;
}

std::vector<std::uint32_t> frames_of(const ScenarioTimeline& timeline) {
  std::vector<std::uint32_t> frames;
  for (const auto& r : timeline.records)
    if (frames.empty() || frames.back() != r.frame) frames.push_back(r.frame);
  return frames;
}

// reach[a][b]: b depends on a, directly or through others.
std::vector<std::vector<bool>> reachability(const Scenario& s) {
  const std::size_t n = s.workloads.size();
  std::vector<std::vector<bool>> reach(n, std::vector<bool>(n, false));
  for (std::size_t c = 0; c < n; ++c)
    for (const auto& d : s.workloads[c].depends_on) reach[d.producer][c] = true;
  for (std::size_t k = 0; k < n; ++k)
    for (std::size_t i = 0; i < n; ++i)
      if (reach[i][k])
        for (std::size_t j = 0; j < n; ++j)
          if (reach[k][j]) reach[i][j] = true;
  return reach;
}

std::string count_text(const std::optional<std::size_t>& count) {
  return count ? std::to_string(*count) : std::string();
}

}  // namespace

std::vector<DependencyGapRow> dependency_gaps(const Scenario& s, const ScenarioTimeline& timeline) {
  const auto by_key = index_ok(timeline);
  const auto frames = frames_of(timeline);
  std::vector<DependencyGapRow> rows;
  for (std::size_t c = 0; c < s.workloads.size(); ++c)
    for (std::size_t i = 0; i < s.workloads[c].depends_on.size(); ++i) {
      const std::size_t p = s.workloads[c].depends_on[i].producer;
      for (const Clock clock : kClocks) {
        DependencyGapRow row;
        row.consumer = c;
        row.index = i;
        row.clock = clock;
        const bool poll = clock == Clock::poll;
        std::vector<double> gaps, lows, highs;
        std::size_t disturbed = 0;
        for (std::uint32_t f : frames) {
          const auto consumer = by_key.find({f, c});
          const auto producer = by_key.find({f, p});
          if (consumer == by_key.end() || producer == by_key.end()) continue;
          const auto start = start_on(*consumer->second, clock);
          const auto end = end_on(*producer->second, clock);
          if (!start || !end) continue;
          if (poll && ((consumer->second->poll_disturbed & kPollStartDisturbed) ||
                       (producer->second->poll_disturbed & kPollEndDisturbed))) {
            ++disturbed;
            continue;
          }
          gaps.push_back(*start - *end);
          if (*start < *end) ++row.early_frames;
          if (poll && consumer->second->poll_start_window_us &&
              producer->second->poll_end_window_us) {
            lows.push_back(*start - *end - *consumer->second->poll_start_window_us);
            highs.push_back(*start - *end + *producer->second->poll_end_window_us);
          }
        }
        if (poll) row.disturbed_frames = disturbed;
        if (!lows.empty() && lows.size() == gaps.size()) {
          row.gap_p50_low_us = percentile(lows, 50);
          row.gap_p50_high_us = percentile(highs, 50);
        }
        if (gaps.empty()) continue;
        row.frames = gaps.size();
        row.gap_us[0] = percentile(gaps, 5);
        row.gap_us[1] = percentile(gaps, 50);
        row.gap_us[2] = percentile(gaps, 95);
        row.gap_min_us = *std::min_element(gaps.begin(), gaps.end());
        row.gap_max_us = *std::max_element(gaps.begin(), gaps.end());
        rows.push_back(std::move(row));
      }
    }
  return rows;
}

std::vector<OverlapRow> pairwise_overlap(const Scenario& s, const ScenarioTimeline& timeline) {
  const auto by_key = index_ok(timeline);
  const auto frames = frames_of(timeline);
  const auto reach = reachability(s);
  std::vector<OverlapRow> rows;
  for (std::size_t a = 0; a < s.workloads.size(); ++a)
    for (std::size_t b = a + 1; b < s.workloads.size(); ++b)
      for (const Clock clock : kClocks) {
        OverlapRow row;
        row.a = a;
        row.b = b;
        row.same_queue = s.workloads[a].queue == s.workloads[b].queue;
        row.dependent = reach[a][b] || reach[b][a];
        row.clock = clock;
        const bool poll = clock == Clock::poll;
        std::size_t disturbed = 0;
        std::vector<double> fractions;
        for (std::uint32_t f : frames) {
          const auto ra = by_key.find({f, a});
          const auto rb = by_key.find({f, b});
          if (ra == by_key.end() || rb == by_key.end()) continue;
          const auto sa = start_on(*ra->second, clock), ea = end_on(*ra->second, clock);
          const auto sb = start_on(*rb->second, clock), eb = end_on(*rb->second, clock);
          if (!sa || !ea || !sb || !eb) continue;
          if (poll && (ra->second->poll_disturbed || rb->second->poll_disturbed)) {
            ++disturbed;
            continue;
          }
          const double shorter = std::min(*ea - *sa, *eb - *sb);
          if (shorter <= 0) continue;
          const double both = std::min(*ea, *eb) - std::max(*sa, *sb);
          const double fraction = std::clamp(both / shorter, 0.0, 1.0);
          fractions.push_back(fraction);
          if (fraction > 0) ++row.overlapped_frames;
        }
        if (poll) row.disturbed_frames = disturbed;
        if (fractions.empty()) continue;
        row.frames = fractions.size();
        row.overlap_p50 = percentile(fractions, 50);
        row.overlap_max = *std::max_element(fractions.begin(), fractions.end());
        rows.push_back(std::move(row));
      }
  return rows;
}

std::string dependencies_csv(const Scenario& s, const std::vector<DependencyGapRow>& rows) {
  const FramePlan& plan = frame_plan_of(s);
  std::string out = csv_line(kDependencyColumns);
  for (const auto& r : rows) {
    const DependencySpec& d = s.workloads[r.consumer].depends_on[r.index];
    const DependencyPlan& planned = plan.dependency(r.consumer, r.index);
    std::string d3d12;
    for (const PlacedBarrier& b : planned.barriers) {
      if (!d3d12.empty()) d3d12 += "; ";
      d3d12 += describe(b.barrier);
    }
    if (d3d12.empty()) d3d12 = planned.note.empty() ? "none" : planned.note;
    const std::string fields[] = {s.name,
                                  s.workloads[d.producer].name,
                                  s.workloads[r.consumer].name,
                                  barrier_label(d.barrier),
                                  planned.cross_queue ? "true" : "false",
                                  d3d12,
                                  std::string(to_string(r.clock)),
                                  std::to_string(r.frames),
                                  csv_number(r.gap_us[0]),
                                  csv_number(r.gap_us[1]),
                                  csv_number(r.gap_us[2]),
                                  csv_number(r.gap_min_us),
                                  csv_number(r.gap_max_us),
                                  std::to_string(r.early_frames),
                                  count_text(r.disturbed_frames),
                                  csv_number(r.gap_p50_low_us),
                                  csv_number(r.gap_p50_high_us)};
    const std::vector<std::string_view> views(std::begin(fields), std::end(fields));
    out += csv_line(views.data(), views.size());
  }
  return out;
}

std::string overlap_csv(const Scenario& s, const std::vector<OverlapRow>& rows) {
  std::string out = csv_line(kOverlapColumns);
  for (const auto& r : rows) {
    const std::string fields[] = {s.name,
                                  s.workloads[r.a].name,
                                  s.workloads[r.b].name,
                                  r.same_queue ? "true" : "false",
                                  r.dependent ? "dependent" : "independent",
                                  std::string(to_string(r.clock)),
                                  std::to_string(r.frames),
                                  std::to_string(r.overlapped_frames),
                                  csv_number(r.overlap_p50),
                                  csv_number(r.overlap_max),
                                  count_text(r.disturbed_frames)};
    const std::vector<std::string_view> views(std::begin(fields), std::end(fields));
    out += csv_line(views.data(), views.size());
  }
  return out;
}

}  // namespace gpuoverlap
