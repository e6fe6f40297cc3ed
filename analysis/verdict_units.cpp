// The evidence of one condition: which of its frames count (the sides of an alternating
// condition), and how they pair with the baseline's into units (rounds, blocks, held and running
// blocks), metric by metric.
#include <algorithm>

#include "analysis/verdict_internal.h"

namespace gpuoverlap::verdict_internal {

bool running_side(const FrameRecord& f) { return !f.bg_held && background_overlapped(f); }
bool held_side(const FrameRecord& f) { return f.bg_held && !background_overlapped(f); }

std::uint32_t alternate_frames(const Scenario& s) {
  return s.background ? s.background->alternate_frames : 0;
}

bool any_frame(const FrameRecord&) { return true; }

namespace {

std::uint32_t frame_count(const ScenarioOutcome& o) {
  return o.timeline->frames.empty() ? 0 : o.timeline->frames.back().frame + 1;
}

// A frame filter: `side`, and the frame number in [first, end).
std::function<bool(const FrameRecord&)> in_range(bool (*side)(const FrameRecord&),
                                                 std::uint32_t first, std::uint32_t end) {
  return [=](const FrameRecord& f) { return f.frame >= first && f.frame < end && side(f); };
}

}  // namespace

std::vector<Unit> units_of(const std::vector<const ScenarioOutcome*>& baseline_rounds,
                           const std::vector<const ScenarioOutcome*>& rounds, Clock gpu_clock,
                           const VerdictSettings& settings, std::uint32_t block,
                           bool (*condition_side)(const FrameRecord&)) {
  std::vector<Unit> units;
  if (block > 0) {
    for (const ScenarioOutcome* c : rounds) {
      const std::uint32_t frames = frame_count(*c);
      for (std::uint32_t first = 0; first < frames; first += 2 * block)
        units.push_back({verdict_metrics(c->scenario, *c->timeline, gpu_clock,
                                         in_range(held_side, first, first + 2 * block)),
                         verdict_metrics(c->scenario, *c->timeline, gpu_clock,
                                         in_range(running_side, first, first + 2 * block))});
    }
    return units;
  }
  if (baseline_rounds.size() == 1 && rounds.size() == 1) {
    const ScenarioOutcome& b = *baseline_rounds.front();
    const ScenarioOutcome& c = *rounds.front();
    const std::uint32_t b_frames = frame_count(b), c_frames = frame_count(c);
    const auto blocks = static_cast<std::uint32_t>(std::max<std::size_t>(1, settings.blocks));
    for (std::uint32_t k = 0; k < blocks; ++k)
      units.push_back(
          {verdict_metrics(b.scenario, *b.timeline, gpu_clock,
                           in_range(any_frame, k * b_frames / blocks, (k + 1) * b_frames / blocks)),
           verdict_metrics(
               c.scenario, *c.timeline, gpu_clock,
               in_range(condition_side, k * c_frames / blocks, (k + 1) * c_frames / blocks))});
    return units;
  }
  for (const ScenarioOutcome* c : rounds) {
    const auto b = std::find_if(
        baseline_rounds.begin(), baseline_rounds.end(),
        [&](const ScenarioOutcome* o) { return o->scenario.round == c->scenario.round; });
    if (b == baseline_rounds.end()) continue;
    units.push_back({verdict_metrics((*b)->scenario, *(*b)->timeline, gpu_clock, any_frame),
                     verdict_metrics(c->scenario, *c->timeline, gpu_clock, condition_side)});
  }
  return units;
}

Samples pooled_metrics(const std::vector<const ScenarioOutcome*>& rounds, Clock gpu_clock,
                       bool (*use_frame)(const FrameRecord&)) {
  Samples pooled;
  for (const ScenarioOutcome* r : rounds) {
    Samples one = verdict_metrics(r->scenario, *r->timeline, gpu_clock, use_frame);
    if (pooled.empty()) {
      pooled = std::move(one);
      continue;
    }
    for (std::size_t m = 0; m < pooled.size() && m < one.size(); ++m)
      pooled[m].second.insert(pooled[m].second.end(), one[m].second.begin(), one[m].second.end());
  }
  return pooled;
}

const std::vector<double>& samples_of(const Samples& samples, std::string_view metric) {
  static const std::vector<double> none;
  for (const auto& [name, values] : samples)
    if (name == metric) return values;
  return none;
}

}  // namespace gpuoverlap::verdict_internal
