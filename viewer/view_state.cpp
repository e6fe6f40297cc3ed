#include "viewer/view_state.h"

#include <fmt/format.h>

#include <algorithm>

#include "viewer/live_feed.h"

namespace gpuoverlap::viewer {

void choose_series(HistoryView& h) {
  h.menus = series_menus(h.data.series, h.choice);
  const history::Series* s = find_series(h.data.series, h.choice);
  h.trend = s ? std::optional<TrendScene>(trend_scene(*s)) : std::nullopt;
}

std::optional<std::uint32_t> frame_asked(const ViewState& state) {
  if (state.medians || state.frames.empty()) return std::nullopt;
  return state.frames[static_cast<std::size_t>(state.frame_index)];
}

bool shown_in_timeline(const ViewState& state, std::size_t index) {
  if (index == state.scenario) return true;
  return std::any_of(state.devices.bands.begin(), state.devices.bands.end(),
                     [&](const DeviceBand& band) { return band.scenario == index; });
}

void refresh_tree(ViewState& state) {
  if (state.tree_of == state.run.scenarios.size() && !state.tree.empty()) return;
  std::vector<std::string> names;
  for (const LoadedScenario& sc : state.run.scenarios) names.push_back(sc.name);
  state.tree = scenario_tree(names);
  state.tree_of = names.size();
}

void select_scenario(ViewState& state, std::size_t index, std::optional<Clock> clock) {
  state.scenario = index;
  const LoadedScenario& s = state.run.scenarios[index];
  state.frames = frame_numbers(s);
  state.clocks = available_clocks(s);
  const bool has_ts =
      std::find(state.clocks.begin(), state.clocks.end(), Clock::ts) != state.clocks.end();
  // A clock this scenario has no value on (a grid cell opened from another) falls back too.
  const bool has_clock =
      clock && std::find(state.clocks.begin(), state.clocks.end(), *clock) != state.clocks.end();
  state.clock = has_clock ? *clock : has_ts ? Clock::ts : Clock::poll;
  state.frame_index =
      std::min(state.frame_index, std::max(0, static_cast<int>(state.frames.size()) - 1));
  state.device = device_lines(s.meta);
  state.fit_pending = true;
}

void rebuild(ViewState& state) {
  const LoadedScenario& s = state.run.scenarios[state.scenario];
  const std::optional<std::uint32_t> frame = frame_asked(state);
  state.input = timeline_input(s, state.clock, frame);
  state.devices.bands =
      device_bands(state.run, state.devices.list, state.scenario, state.clock, frame);
  if (state.compare) {
    CompareView& b = *state.compare;
    b.input.reset();
    for (const LoadedScenario& other : b.run.scenarios)
      if (other.name == s.name) {
        // The same frame where B has it, else B's medians.
        const auto frames = frame_numbers(other);
        const bool has = frame && std::find(frames.begin(), frames.end(), *frame) != frames.end();
        b.input = timeline_input(other, state.clock, has ? frame : std::nullopt);
      }
    if (!b.result || b.compared_on != state.clock) {
      CompareOptions options;
      options.clock = state.clock;
      b.result = compare_runs(state.run, b.run, options);
      b.compared_on = state.clock;
    }
  }
  state.spans = frame_spans(s, state.clock);
  const std::optional<FrameTimeStats> frame_time = frame_time_stats(s.frames);
  state.frame_time = frame_time ? "Frame time " + describe(*frame_time) : std::string();
  // A preemption scenario's records are per submission, each from its own submit: the same
  // number on the load and the urgent job is not the same moment, so no overlap matrix.
  const bool preemption = s.kind == ScenarioKind::preemption;
  state.overlap = preemption ? std::vector<OverlapCell>{} : overlap_matrix(s, state.clock);
  state.overlap_cells = overlap_grid(s.workloads, state.overlap);
  state.preemption = preemption_grid(state.run, state.scenario, state.clock);
  state.latencies = urgent_latencies(s, state.clock);
  if (state.fit_pending) {
    const double width = state.view.width_px;
    state.view = state.devices.bands.empty() ? layout::fit(state.input, state.view)
                                             : fit_bands(state.devices.bands, state.view);
    state.view.width_px = width;
    state.fit_pending = false;
  }
  state.study.verdict.reset();
  state.study.error.clear();
  if (s.directory.empty()) return;  // live: no folder, no study verdict yet
  if (auto verdict = study_verdict(state.run.directory, s); !verdict)
    state.study.error = verdict.error().message;
  else
    state.study.verdict = std::move(*verdict);
}

void take_snapshot(ViewState& state, const LiveFeed& feed, std::uint64_t& version,
                   std::optional<Clock> clock) {
  auto snapshot = feed.snapshot(version);
  if (!snapshot) return;
  const std::string shown =
      state.run.scenarios.empty() ? "" : state.run.scenarios[state.scenario].name;
  state.run = std::move(*snapshot);
  state.live.status = fmt::format("live: {} frames measured, {}", feed.frames(),
                                  feed.finished() ? "the run has ended" : "running");
  if (state.run.scenarios.empty()) return;
  std::size_t index = state.run.scenarios.size() - 1;
  if (!state.live.follow)
    for (std::size_t i = 0; i < state.run.scenarios.size(); ++i)
      if (state.run.scenarios[i].name == shown) index = i;
  const bool moved = state.run.scenarios[index].name != shown;
  const Clock keep = state.clock;
  const bool fit = state.fit_pending;
  select_scenario(state, index, moved ? clock : std::optional<Clock>(keep));
  state.fit_pending = fit || moved || (state.live.follow && state.live.auto_fit);
  if (state.live.follow && !state.frames.empty()) {
    state.medians = false;
    state.frame_index = static_cast<int>(state.frames.size()) - 1;
  }
  rebuild(state);
}

}  // namespace gpuoverlap::viewer
