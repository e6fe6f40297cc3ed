// What the viewer shows of a results history (`gpuoverlap view --db DB`): the runs of each
// machine on a time axis, and one series' trend with its 95 % interval band and its change
// points. Read through history::Store (never SQL here); everything after the read is pure: no
// window, no ImGui, no database, so it is tested without a display
// (tests/unit/viewer_history_scene_test.cpp). The window (window.cpp) draws the geometry this
// file computes and turns clicks into the actions it names.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "history/change_points.h"
#include "history/history_store.h"
#include "layout/timeline_layout.h"

namespace gpuoverlap::viewer {

// Everything the history view shows, read once when the window opens.
struct HistoryData {
  std::string shown;  // the history's location for messages (a URI without its password)
  std::vector<history::MachineEntry> machines;
  std::vector<history::RunEntry> runs;
  std::vector<history::Series> series;  // every series, each with its newest `window` points
};

// The trend's window, as `history trend`'s default: a series' newest runs judged for change
// points (the test's cost grows with the square of it).
inline constexpr std::size_t kHistoryTrendWindow = 60;

// Reads the history at `location` through history::Store. Errors keep the store's categories
// (an unreachable server is the environment's, a malformed location the input's).
Result<HistoryData> read_history(const history::Location& location,
                                 std::size_t window = kHistoryTrendWindow);

// "2026-11-25T12:34:56Z" (run.json's started_at) as seconds since the Unix epoch; nullopt for
// anything else ("?" in results that lack it).
std::optional<double> utc_seconds(std::string_view iso8601);
// Seconds since the Unix epoch as "2026-11-25 12:34" (UTC), for the time axis's ticks.
std::string utc_minutes_text(double seconds);

// One run as a mark on its machine's row.
struct RunMark {
  std::int64_t run_id = 0;
  std::string started_at;
  std::optional<double> time_s;  // nullopt: started_at unreadable, so the run has no place
  std::string directory;         // the results folder it was ingested from
};

struct MachineRow {
  std::int64_t machine_id = 0;
  std::string label;           // "machine 1: GPU, driver, API (3 runs)"
  std::vector<RunMark> marks;  // oldest first, as Store::runs() lists them
};

// The runs per machine: a row per machine (in the store's order), one time range for all rows.
struct RunsScene {
  std::vector<MachineRow> rows;
  double begin_s = 0, end_s = 1;  // the axis: every dated mark inside, with a margin
  std::size_t undated = 0;        // runs without a readable started_at (counted, not placed)
};
RunsScene runs_scene(const HistoryData& data);

std::string machine_label(const history::MachineEntry& machine);
// The hover text of a mark: its run, when it started and its folder.
std::string mark_text(const RunMark& mark);

// The runs scene in pixels: `area` is where the rows go, the first `label_px` of it their
// labels, one row of `row_px` per machine, then a tick row.
struct MarkPlace {
  std::size_t row = 0, mark = 0;  // indices into RunsScene::rows and its marks
  double x = 0, y = 0;            // the mark's centre
};
struct AxisTick {
  double at = 0;  // x on a time axis, y on a value axis
  std::string label;
};
struct RunsLayout {
  layout::Rect plot;               // the time axis's extent (right of the labels)
  std::vector<layout::Rect> rows;  // a row per machine, labels included
  std::vector<MarkPlace> marks;
  std::vector<AxisTick> ticks;
};
RunsLayout runs_layout(const RunsScene& scene, layout::Rect area, double label_px, double row_px);
// The mark under (x, y) within `radius_px` (the nearest); nullopt when none.
std::optional<MarkPlace> mark_at(const RunsLayout& layout, double x, double y, double radius_px);

// Clicking a mark: open its folder in the viewer where it is still there, else say so.
struct RunOpening {
  std::optional<std::filesystem::path> open;
  std::string message;  // "folder no longer present: PATH" when there is nothing to open
};
RunOpening open_run(const RunMark& mark, bool folder_present);

// The lists to choose a series from, each holding what the series have given the choices to
// its left (machine, then scenario, series, metric, clock). Names are the store's, in order.
struct SeriesMenus {
  std::vector<std::int64_t> machines;
  std::vector<std::string> scenarios, series, metrics, clocks;
};
// The menus for `choice`, which is moved, list by list, to the first entry of a list that
// lacks it: a choice made on the left keeps the rest of it where the series allow.
SeriesMenus series_menus(const std::vector<history::Series>& all, history::SeriesKey& choice);
// The first series, preferring a median (a metric ending "_p50_us"), as the first choice.
history::SeriesKey default_choice(const std::vector<history::Series>& all);
const history::Series* find_series(const std::vector<history::Series>& all,
                                   const history::SeriesKey& key);

// One series' trend: its points run by run (oldest first), its change points as `history
// trend` finds them (history/change_points.h on the values, the same settings), the y range.
struct TrendScene {
  history::SeriesKey key;
  std::string title;  // "default · Compute A · duration_p50_us · ts · machine 1"
  std::vector<history::SeriesPoint> points;
  std::vector<history::ChangePoint> changes;
  bool band = false;  // some point has its 95 % interval
  double low = 0, high = 1;
};
TrendScene trend_scene(const history::Series& series,
                       const history::ChangePointSettings& settings = {});
// "+5.0 % [+3.1, +7.2]": a change point's step and its interval.
std::string step_text(const history::ChangePoint& change);

// The trend in pixels: a point per run, evenly spaced (run by run, as `history trend` lists
// them); the band from each point's low to its high; a vertical line before each change
// point's first run; each level's median as a horizontal segment.
struct TrendPointPlace {
  double x = 0, y = 0;
  std::optional<double> y_low, y_high;
};
struct ChangeMark {
  std::size_t index = 0;  // the first run of the new level
  double x = 0;
  std::string label;
};
struct LevelSegment {
  double x0 = 0, x1 = 0, y = 0;
};
struct TrendLayout {
  layout::Rect plot;
  std::vector<TrendPointPlace> points;
  std::vector<ChangeMark> changes;
  std::vector<LevelSegment> levels;
  std::vector<AxisTick> y_ticks;
};
TrendLayout trend_layout(const TrendScene& scene, layout::Rect plot);

}  // namespace gpuoverlap::viewer
