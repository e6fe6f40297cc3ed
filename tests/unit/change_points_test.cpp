// E-divisive means (history/change_points.h) on synthetic series: steps found where they are,
// none found where there is none. Fixed seeds: every run of this test sees the same series.
#include "history/change_points.h"

#include <gtest/gtest.h>

#include <random>

namespace gpuoverlap::history {
namespace {

// A run-to-run series of a workload's p50: level 100 with `noise` relative spread (normal),
// times (1 + step) from `at` on.
std::vector<double> series(std::size_t n, std::size_t at, double step, double noise,
                           std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::normal_distribution<double> spread(0, noise);
  std::vector<double> out(n);
  for (std::size_t i = 0; i < n; ++i)
    out[i] = 100 * (1 + (i >= at ? step : 0)) * (1 + spread(random));
  return out;
}

TEST(ChangePoints, OneClearStepIsFoundWithItsSizeAndInterval) {
  const auto points = change_points(series(60, 40, 0.05, 0.01, 1));
  ASSERT_EQ(points.size(), 1u);
  EXPECT_EQ(points[0].index, 40u);
  EXPECT_LE(points[0].p_value, 0.01);
  EXPECT_NEAR(points[0].step, 0.05, 0.01);
  EXPECT_LT(points[0].step_low, points[0].step);
  EXPECT_GT(points[0].step_high, points[0].step);
  EXPECT_GT(points[0].step_low, 0) << "a 5 % step amid 1 % noise is surely up";
  EXPECT_NEAR(points[0].before, 100, 1);
  EXPECT_NEAR(points[0].after, 105, 1);
}

TEST(ChangePoints, TwoStepsUpAndBack) {
  std::vector<double> x = series(90, 30, 0.08, 0.01, 2);
  for (std::size_t i = 60; i < 90; ++i) x[i] /= 1.08;  // fixed again at run 60
  const auto points = change_points(x);
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[0].index, 30u);
  EXPECT_EQ(points[1].index, 60u);
  EXPECT_GT(points[0].step, 0);
  EXPECT_LT(points[1].step, 0);
}

// The goals: a 5 % step amid run-to-run noise found at its run in at least 95 of 100 series,
// and 100 series without one giving at most 5 change points in all. With 1 % noise (relative
// sd of a workload's p50 from run to run) at the exact run; with 1.5 % within one run (where
// the step is 3.3 sd, the run next to it is often as likely).
TEST(ChangePoints, DetectionAndFalseAlarmsOverAHundredSeries) {
  for (const double noise : {0.01, 0.015}) {
    std::size_t exact = 0, near = 0, false_points = 0;
    for (std::uint64_t seed = 0; seed < 100; ++seed) {
      const std::size_t at = 20 + seed % 20;
      for (const ChangePoint& c : change_points(series(60, at, 0.05, noise, 100 + seed))) {
        exact += c.index == at;
        near += c.index + 1 >= at && c.index <= at + 1;
      }
      false_points += change_points(series(60, 60, 0.0, noise, 1000 + seed)).size();
    }
    EXPECT_GE(noise < 0.0125 ? exact : near, 95u) << "noise " << noise;
    EXPECT_LE(false_points, 5u) << "noise " << noise;
  }
}

TEST(ChangePoints, ShortOrDegenerateSeriesHaveNone) {
  EXPECT_TRUE(change_points({}).empty());
  EXPECT_TRUE(change_points({1, 2, 3, 4, 5, 6, 7}).empty()) << "fewer than 2 x min_segment";
  EXPECT_TRUE(change_points(std::vector<double>(40, 7.0)).empty()) << "constant";
  std::vector<double> nan = series(40, 20, 0.2, 0.01, 3);
  nan[5] = std::nan("");
  EXPECT_TRUE(change_points(nan).empty());
  // The same series always gives the same answer (the shuffles' seed is fixed).
  const auto x = series(50, 25, 0.03, 0.01, 4);
  const auto a = change_points(x), b = change_points(x);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].index, b[i].index);
    EXPECT_EQ(a[i].p_value, b[i].p_value);
  }
}

}  // namespace
}  // namespace gpuoverlap::history

#include "history/against_history.h"

namespace gpuoverlap::history {
namespace {

// A run against its machine's last runs: changed only beyond the threshold from their median
// and outside all of them; fewer than three earlier runs are not judged.
TEST(AgainstHistory, ChangedMeansBeyondTheThresholdAndOutsideEveryEarlierRun) {
  const PastValues past = {
      {{"s", "A", "duration_p50_us", "ts"}, {100, 102, 98, 101, 99}},
      {{"s", "B", "duration_p50_us", "ts"}, {100, 130, 70}},  // a machine that always spread
      {{"s", "C", "duration_p50_us", "ts"}, {100, 100}}};
  const std::vector<MetricRow> run = {{"s", "A", "duration_p50_us", "ts", 108, {}, {}, 10},
                                      {"s", "A", "duration_p50_us", "poll", 108, {}, {}, 10},
                                      {"s", "B", "duration_p50_us", "ts", 120, {}, {}, 10},
                                      {"s", "C", "duration_p50_us", "ts", 150, {}, {}, 10}};
  const auto j = judge_against(run, past, 5.0);
  ASSERT_EQ(j.size(), 4u);
  EXPECT_TRUE(j[0].judged);
  EXPECT_TRUE(j[0].changed) << "8 % above the median of 100, above the highest (102)";
  EXPECT_DOUBLE_EQ(*j[0].median, 100);
  EXPECT_NEAR(*j[0].change, 0.08, 1e-12);
  EXPECT_EQ(j[0].runs, 5u);
  EXPECT_FALSE(j[1].judged) << "no earlier run on the poll clock";
  EXPECT_TRUE(j[2].judged);
  EXPECT_FALSE(j[2].changed) << "20 % from the median, but inside what the machine did";
  EXPECT_FALSE(j[3].judged) << "two earlier runs are too few";
  EXPECT_FALSE(judge_against(run, past, 10.0)[0].changed) << "8 % is within a 10 % threshold";
  const std::vector<MetricRow> faster = {{"s", "A", "duration_p50_us", "ts", 90, {}, {}, 10}};
  const auto f = judge_against(faster, past, 5.0);
  EXPECT_TRUE(f[0].changed);
  EXPECT_LT(*f[0].change, 0);
}

}  // namespace
}  // namespace gpuoverlap::history
