// The viewer's timeline geometry (layout/timeline_layout.h), without a window.
#include "layout/timeline_layout.h"

#include <gtest/gtest.h>

namespace gpuoverlap::layout {
namespace {

TimelineInput two_queues() {
  TimelineInput in;
  in.queues = {{"direct", "direct (DIRECT)"}, {"async", "async (COMPUTE, high)"}};
  in.workloads = {
      {"A", "direct", false, 0.0, 100.0, 0.0, 120.0, false},
      {"G", "direct", true, 100.0, 300.0, 95.0, 320.0, true},
      {"C", "async", false, 50.0, 150.0, std::nullopt, std::nullopt, false},
      {"late", "async", false, std::nullopt, std::nullopt, std::nullopt, std::nullopt, false}};
  in.dependencies = {{"A", "G", "legacy"},
                     {"A", "C", "enhanced-split-collapsed"},
                     {"A", "nobody", "legacy"},
                     {"late", "G", "legacy"}};
  return in;
}

View wide(double begin_us, double end_us) {
  View v;
  v.width_px = 1180;  // a 1000 px time axis after the 180 px labels
  v.begin_us = begin_us;
  v.end_us = end_us;
  return v;
}

TEST(TimelineLayout, TickStepsAre125TimesAPowerOfTenAndAdaptToTheZoom) {
  EXPECT_DOUBLE_EQ(tick_step_us(1000, 1000, 70), 100);    // 70 us minimum -> 100
  EXPECT_DOUBLE_EQ(tick_step_us(1000, 1000, 150), 200);   // 150 -> 200
  EXPECT_DOUBLE_EQ(tick_step_us(1000, 1000, 300), 500);   // 300 -> 500
  EXPECT_DOUBLE_EQ(tick_step_us(10, 1000, 70), 1);        // zoomed in: 0.7 -> 1
  EXPECT_DOUBLE_EQ(tick_step_us(1, 1000, 70), 0.1);       // 0.07 -> 0.1
  EXPECT_DOUBLE_EQ(tick_step_us(2e6, 1000, 70), 200000);  // zoomed out
  EXPECT_DOUBLE_EQ(tick_step_us(0, 1000, 70), 1) << "an empty span still gives a step";
  EXPECT_EQ(format_time(250, 50), "250 us");
  EXPECT_EQ(format_time(1500, 500), "1500 us") << "the unit follows the step";
  EXPECT_EQ(format_time(2000, 1000), "2 ms");
  EXPECT_EQ(format_time(2500, 500), "2500 us");
  EXPECT_EQ(format_time(-3000, 1000), "-3 ms");
  EXPECT_EQ(format_time(0.3, 0.1), "0.3 us");
  EXPECT_EQ(format_time(3e6, 1e6), "3 s");
}

TEST(TimelineLayout, LanesAreGroupedByQueueWithAHeaderEach) {
  const TimelineLayout l = layout_timeline(two_queues(), wide(0, 400));
  ASSERT_EQ(l.lanes.size(), 6u);
  const char* expected[] = {"direct (DIRECT)", "A", "G", "async (COMPUTE, high)", "C", "late"};
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(l.lanes[i].label, expected[i]);
    EXPECT_EQ(l.lanes[i].queue_header, i == 0 || i == 3);
    if (i > 0) {
      EXPECT_DOUBLE_EQ(l.lanes[i].rect.y0, l.lanes[i - 1].rect.y1) << "stacked";
    }
  }
  EXPECT_DOUBLE_EQ(l.lanes[0].rect.y0, View{}.axis_height_px);
  EXPECT_DOUBLE_EQ(l.height_px, l.lanes.back().rect.y1);
}

TEST(TimelineLayout, BarsSitInTheirLanesAtTheirTimesWithLabelsThatFit) {
  const TimelineLayout l = layout_timeline(two_queues(), wide(0, 400));
  ASSERT_EQ(l.bars.size(), 3u) << "no bar for a workload without times";
  const Bar& a = l.bars[0];
  EXPECT_DOUBLE_EQ(a.rect.x0, 180);        // t = 0 at the axis' left edge
  EXPECT_DOUBLE_EQ(a.rect.x1, 180 + 250);  // 100 us of 400 over 1000 px
  EXPECT_GT(a.rect.y0, l.lanes[1].rect.y0);
  EXPECT_LT(a.rect.y1, l.lanes[1].rect.y1);
  EXPECT_EQ(a.label, "A 100.0 us");
  const Bar& g = l.bars[1];
  EXPECT_TRUE(g.graphics);
  EXPECT_TRUE(g.flagged);
  EXPECT_GT(g.rect.y0, l.lanes[2].rect.y0);
  // Zoomed out, a bar too narrow for its label has none.
  const TimelineLayout far = layout_timeline(two_queues(), wide(0, 40000));
  EXPECT_TRUE(far.bars[0].label.empty());
}

TEST(TimelineLayout, BarsOutsideTheViewAreLeftOutAndPartlyVisibleOnesClipped) {
  const TimelineLayout l = layout_timeline(two_queues(), wide(120, 220));
  // A ends at 100: out of view. G (100-300) is clipped to the whole axis, C (50-150) to its left.
  ASSERT_EQ(l.bars.size(), 2u);
  EXPECT_EQ(l.bars[0].workload, 1u);
  EXPECT_DOUBLE_EQ(l.bars[0].rect.x0, 180);
  EXPECT_DOUBLE_EQ(l.bars[0].rect.x1, 1180);
  EXPECT_EQ(l.bars[1].workload, 2u);
  EXPECT_DOUBLE_EQ(l.bars[1].rect.x0, 180);
  EXPECT_DOUBLE_EQ(l.bars[1].rect.x1, 180 + 300);
  for (const Tick& t : l.ticks) {
    EXPECT_GE(t.time_us, 120);
    EXPECT_LE(t.time_us, 220);
  }
  EXPECT_EQ(l.ticks.front().label, "120 us");
}

TEST(TimelineLayout, ArrowsRunFromProducerEndToConsumerStartAndMarkSplitBarriers) {
  const TimelineLayout l = layout_timeline(two_queues(), wide(0, 400));
  ASSERT_EQ(l.arrows.size(), 2u) << "unknown workloads and workloads without times get none";
  const Arrow& to_g = l.arrows[0];
  EXPECT_EQ(to_g.producer, 0u);
  EXPECT_EQ(to_g.consumer, 1u);
  EXPECT_DOUBLE_EQ(to_g.x0, l.bars[0].rect.x1);
  EXPECT_DOUBLE_EQ(to_g.x1, l.bars[1].rect.x0);
  EXPECT_DOUBLE_EQ(to_g.y0, (l.bars[0].rect.y0 + l.bars[0].rect.y1) / 2);
  EXPECT_FALSE(to_g.split);
  EXPECT_TRUE(l.arrows[1].split);
  EXPECT_EQ(l.arrows[1].barrier, "enhanced-split-collapsed");
}

TEST(TimelineLayout, WhiskersSpanP5ToP95AndFitShowsEverything) {
  const TimelineLayout l = layout_timeline(two_queues(), wide(0, 400));
  ASSERT_EQ(l.whiskers.size(), 2u);
  EXPECT_DOUBLE_EQ(l.whiskers[1].x0, 180 + 95 * 2.5);
  EXPECT_DOUBLE_EQ(l.whiskers[1].x1, 180 + 320 * 2.5);
  const View v = fit(two_queues(), wide(0, 1));
  EXPECT_LT(v.begin_us, 0);
  EXPECT_GT(v.end_us, 320);
  EXPECT_LT(v.end_us, 340);
  const View empty = fit(TimelineInput{}, wide(5, 6));
  EXPECT_EQ(empty.begin_us, 0);
  EXPECT_EQ(empty.end_us, 1);
  EXPECT_TRUE(layout_timeline(TimelineInput{}, empty).bars.empty());
}

}  // namespace
}  // namespace gpuoverlap::layout
