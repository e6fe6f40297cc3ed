// What the viewer shows of a results history (viewer/history_scene.h), from history rows in
// memory: no database, no display.
#include <gtest/gtest.h>

#include "viewer/history_scene.h"

namespace gpuoverlap::viewer {
namespace {

history::MachineEntry machine(std::int64_t id, const std::string& gpu, std::int64_t runs) {
  history::MachineEntry m;
  m.id = id;
  m.fingerprint.gpu = gpu;
  m.fingerprint.driver = "Mesa 22.3.6";
  m.fingerprint.api = "Vulkan";
  m.runs = runs;
  return m;
}

history::RunEntry run(std::int64_t id, std::int64_t machine_id, const std::string& started_at) {
  history::RunEntry r;
  r.id = id;
  r.machine_id = machine_id;
  r.started_at = started_at;
  r.directory = "/results/run-" + std::to_string(id);
  return r;
}

HistoryData two_machines() {
  HistoryData data;
  data.shown = "h.sqlite";
  data.machines = {machine(1, "llvmpipe", 2), machine(2, "NVIDIA H100", 2)};
  data.runs = {run(1, 1, "2026-11-01T00:00:00Z"), run(2, 2, "2026-11-02T00:00:00Z"),
               run(3, 1, "2026-11-03T00:00:00Z"), run(4, 2, "?")};
  return data;
}

history::Series series(std::int64_t machine_id, const std::string& scenario,
                       const std::string& workload, const std::string& metric,
                       const std::string& clock, const std::vector<double>& values) {
  history::Series s;
  s.key = {machine_id, scenario, workload, metric, clock};
  for (std::size_t i = 0; i < values.size(); ++i) {
    history::SeriesPoint p;
    p.run_id = static_cast<std::int64_t>(i + 1);
    p.started_at = "2026-11-01T00:00:00Z";
    p.value = values[i];
    s.points.push_back(p);
  }
  return s;
}

TEST(ViewerHistoryScene, StartTimesAreReadAsRunJsonWritesThemAndNothingElse) {
  EXPECT_EQ(utc_seconds("1970-01-01T00:00:00Z"), 0.0);
  EXPECT_EQ(utc_seconds("2026-11-25T12:34:56Z"), 1795610096.0);
  EXPECT_EQ(utc_seconds("2000-02-29T00:00:01Z"), 951782401.0) << "a leap day";
  for (const char* bad : {"?", "", "2026-11-25 12:34:56Z", "2026-13-01T00:00:00Z",
                          "2026-11-25T12:34:56", "2026-11-2xT12:34:56Z", "2026-11-25T25:00:00Z"})
    EXPECT_FALSE(utc_seconds(bad)) << bad;
  EXPECT_EQ(utc_minutes_text(1795610096.0), "2026-11-25 12:34");
  EXPECT_EQ(utc_minutes_text(951782401.0), "2000-02-29 00:00");
}

TEST(ViewerHistoryScene, EachMachineIsARowWithAMarkPerRunOnOneTimeAxis) {
  const RunsScene scene = runs_scene(two_machines());
  ASSERT_EQ(scene.rows.size(), 2u);
  EXPECT_EQ(scene.rows[0].machine_id, 1);
  EXPECT_EQ(scene.rows[0].label, "machine 1: llvmpipe, Mesa 22.3.6, Vulkan (2 runs)");
  ASSERT_EQ(scene.rows[0].marks.size(), 2u);
  EXPECT_EQ(scene.rows[0].marks[0].run_id, 1);
  EXPECT_EQ(scene.rows[0].marks[1].run_id, 3);
  EXPECT_EQ(scene.rows[0].marks[1].directory, "/results/run-3");
  ASSERT_EQ(scene.rows[1].marks.size(), 2u);
  EXPECT_FALSE(scene.rows[1].marks[1].time_s) << "run 4 has no start time";
  EXPECT_EQ(scene.undated, 1u);
  // Two days between the first and last run, 3 % of it each side.
  const double first = *utc_seconds("2026-11-01T00:00:00Z");
  const double last = *utc_seconds("2026-11-03T00:00:00Z");
  EXPECT_DOUBLE_EQ(scene.begin_s, first - 0.03 * (last - first));
  EXPECT_DOUBLE_EQ(scene.end_s, last + 0.03 * (last - first));
}

TEST(ViewerHistoryScene, ALoneRunGetsAnHourEachSide) {
  HistoryData data;
  data.machines = {machine(1, "llvmpipe", 1)};
  data.runs = {run(1, 1, "2026-11-01T00:00:00Z")};
  const RunsScene scene = runs_scene(data);
  EXPECT_DOUBLE_EQ(scene.end_s - scene.begin_s, 7200);
}

TEST(ViewerHistoryScene, MarksArePlacedInTheirRowAtTheirTimeAndFoundUnderThePointer) {
  const RunsScene scene = runs_scene(two_machines());
  const RunsLayout l = runs_layout(scene, {0, 100, 1100, 0}, 100, 20);
  EXPECT_DOUBLE_EQ(l.plot.x0, 100);
  EXPECT_DOUBLE_EQ(l.plot.y1, 140) << "two rows of 20 px";
  ASSERT_EQ(l.rows.size(), 2u);
  ASSERT_EQ(l.marks.size(), 3u) << "the undated run has no place";
  // Run 2 started halfway between run 1 and run 3, on the second row.
  const MarkPlace& first = l.marks[0];
  const MarkPlace& middle = l.marks[2];
  const MarkPlace& third = l.marks[1];
  EXPECT_EQ(middle.row, 1u);
  EXPECT_DOUBLE_EQ(middle.y, 130);
  EXPECT_NEAR(middle.x, (first.x + third.x) / 2, 1e-9);
  EXPECT_NEAR(first.x, 100 + 1000 * 0.03 / 1.06, 1e-9);
  ASSERT_EQ(l.ticks.size(), 5u);
  EXPECT_DOUBLE_EQ(l.ticks.front().at, 100);
  EXPECT_DOUBLE_EQ(l.ticks.back().at, 1100);
  EXPECT_EQ(l.ticks.front().label, utc_minutes_text(scene.begin_s));
  const auto hit = mark_at(l, third.x + 2, third.y - 2, 5);
  ASSERT_TRUE(hit);
  EXPECT_EQ(scene.rows[hit->row].marks[hit->mark].run_id, 3);
  EXPECT_FALSE(mark_at(l, third.x + 20, third.y, 5));
}

TEST(ViewerHistoryScene, ARunWhoseFolderIsGoneSaysSoInsteadOfOpening) {
  const RunMark mark{7, "2026-11-01T00:00:00Z", 0.0, "/results/gone"};
  const RunOpening gone = open_run(mark, false);
  EXPECT_FALSE(gone.open);
  EXPECT_EQ(gone.message, "folder no longer present: /results/gone");
  const RunOpening there = open_run(mark, true);
  ASSERT_TRUE(there.open);
  EXPECT_EQ(*there.open, std::filesystem::path("/results/gone"));
  EXPECT_TRUE(there.message.empty());
  EXPECT_NE(mark_text(mark).find("run 7"), std::string::npos);
}

TEST(ViewerHistoryScene, TheListsFollowTheChoicesToTheirLeft) {
  const std::vector<history::Series> all = {
      series(1, "default", "Compute A", "duration_p50_us", "poll", {1}),
      series(1, "default", "Compute A", "duration_p50_us", "ts", {1}),
      series(1, "default", "Compute A", "duration_p99_us", "ts", {1}),
      series(1, "default", "frame", "frame_interval_p50_us", "cpu", {1}),
      series(2, "no-barriers", "Compute B", "duration_p50_us", "clk", {1})};
  history::SeriesKey choice = default_choice(all);
  EXPECT_EQ(choice, all[0].key) << "the first median";
  SeriesMenus menus = series_menus(all, choice);
  EXPECT_EQ(menus.machines, (std::vector<std::int64_t>{1, 2}));
  EXPECT_EQ(menus.scenarios, (std::vector<std::string>{"default"}));
  EXPECT_EQ(menus.series, (std::vector<std::string>{"Compute A", "frame"}));
  EXPECT_EQ(menus.metrics, (std::vector<std::string>{"duration_p50_us", "duration_p99_us"}));
  EXPECT_EQ(menus.clocks, (std::vector<std::string>{"poll", "ts"}));
  // The metric changed: the clock stays where that metric has it, else moves.
  choice.clock = "ts";
  choice.metric = "duration_p99_us";
  menus = series_menus(all, choice);
  EXPECT_EQ(menus.clocks, (std::vector<std::string>{"ts"}));
  EXPECT_EQ(choice.clock, "ts");
  // Another machine: everything to its right moves to what that machine has.
  choice.machine_id = 2;
  menus = series_menus(all, choice);
  EXPECT_EQ(choice, all[4].key);
  EXPECT_EQ(find_series(all, choice), &all[4]);
  EXPECT_EQ(find_series(all, history::SeriesKey{3, "x", "y", "z", "w"}), nullptr);
}

TEST(ViewerHistoryScene, ATrendHasItsBandAndTheChangePointsHistoryTrendFinds) {
  std::vector<double> values;
  for (int i = 0; i < 24; ++i) values.push_back((i < 12 ? 100.0 : 130.0) + (i % 3) * 0.5);
  history::Series s = series(1, "default", "Compute A", "duration_p50_us", "ts", values);
  s.points[3].low = 95.0;
  s.points[3].high = 140.0;
  s.points[4].low = 96.0;
  s.points[4].high = 104.0;
  const TrendScene scene = trend_scene(s);
  EXPECT_EQ(scene.title, "default · Compute A · duration_p50_us · ts · machine 1");
  EXPECT_TRUE(scene.band);
  // The same change points as history/change_points.h on the values (what `history trend` does).
  const auto expected = history::change_points(values);
  ASSERT_EQ(scene.changes.size(), expected.size());
  ASSERT_EQ(scene.changes.size(), 1u);
  EXPECT_EQ(scene.changes[0].index, 12u);
  // The range holds every value and interval, 5 % of it each side.
  EXPECT_DOUBLE_EQ(scene.low, 95.0 - 0.05 * (140.0 - 95.0));
  EXPECT_DOUBLE_EQ(scene.high, 140.0 + 0.05 * (140.0 - 95.0));

  const TrendLayout l = trend_layout(scene, {0, 0, 240, 100});
  ASSERT_EQ(l.points.size(), 24u);
  EXPECT_DOUBLE_EQ(l.points[0].x, 5) << "run by run, each in the middle of its tenth of the width";
  EXPECT_DOUBLE_EQ(l.points[23].x, 235);
  ASSERT_TRUE(l.points[3].y_low && l.points[3].y_high);
  EXPECT_LT(*l.points[3].y_high, l.points[3].y) << "up is larger";
  EXPECT_GT(*l.points[3].y_low, l.points[3].y);
  EXPECT_FALSE(l.points[5].y_low) << "no interval, no band";
  ASSERT_EQ(l.changes.size(), 1u);
  EXPECT_DOUBLE_EQ(l.changes[0].x, 120) << "between the last run before and the first after";
  EXPECT_EQ(l.changes[0].label, step_text(scene.changes[0]));
  EXPECT_EQ(l.changes[0].label.front(), '+') << "a step up: " << l.changes[0].label;
  ASSERT_EQ(l.levels.size(), 2u);
  EXPECT_DOUBLE_EQ(l.levels[0].x0, 0);
  EXPECT_DOUBLE_EQ(l.levels[0].x1, 120);
  EXPECT_DOUBLE_EQ(l.levels[1].x1, 240);
  EXPECT_GT(l.levels[0].y, l.levels[1].y) << "the level after the step is higher";
  ASSERT_EQ(l.y_ticks.size(), 5u);
  EXPECT_DOUBLE_EQ(l.y_ticks.front().at, 100);
  EXPECT_DOUBLE_EQ(l.y_ticks.back().at, 0);
}

TEST(ViewerHistoryScene, AFlatSeriesStillHasARange) {
  const TrendScene scene =
      trend_scene(series(1, "default", "A", "duration_p50_us", "ts", {50, 50, 50}));
  EXPECT_FALSE(scene.band);
  EXPECT_TRUE(scene.changes.empty());
  EXPECT_DOUBLE_EQ(scene.low, 47.5);
  EXPECT_DOUBLE_EQ(scene.high, 52.5);
}

}  // namespace
}  // namespace gpuoverlap::viewer
