// The frame plan (submissions and fences) and what the barrier lab reads off a run
// (dependencies.csv, overlap.csv), on scenarios and timelines built by hand.
#include "scenarios/frame_plan.h"

#include <gtest/gtest.h>

#include "scenarios/presets.h"
#include "scenarios/scenario.h"
#include "timeline/dependency_analysis.h"

namespace gpuoverlap {
namespace {

TEST(FramePlan, OneQueueWithoutFencesIsOneSubmission) {
  auto s = resolve_scenario("three-dispatches");
  ASSERT_TRUE(s.ok());
  const FramePlan plan = plan_frame(*s);
  EXPECT_FALSE(plan.has_errors());
  ASSERT_EQ(plan.segments.size(), 1u);
  EXPECT_EQ(plan.segments[0].workloads, (std::vector<std::size_t>{0, 1, 2}));
  EXPECT_TRUE(plan.segments[0].wait_for.empty());
  EXPECT_FALSE(plan.segments[0].signals_fence);
}

TEST(FramePlan, CrossQueueDependenciesCutSubmissionsAtFences) {
  auto s = resolve_scenario("cross-queue-fence");
  ASSERT_TRUE(s.ok()) << s.error().message;
  const FramePlan plan = plan_frame(*s);
  ASSERT_FALSE(plan.has_errors());
  // Workloads: 0 Compute A, 1 Gfx A, 2 Compute B (direct); 3 CQ A, 4 CQ B, 5 CQ C (compute).
  // Direct: [A] signals, [Gfx A] signals, [B]. Compute: [CQ A, CQ B] waits for A, [CQ C]
  // waits for Gfx A.
  std::vector<std::vector<std::size_t>> direct, compute;
  for (const Segment& segment : plan.segments)
    (segment.queue == 0 ? direct : compute).push_back(segment.workloads);
  EXPECT_EQ(direct, (std::vector<std::vector<std::size_t>>{{0}, {1}, {2}}));
  EXPECT_EQ(compute, (std::vector<std::vector<std::size_t>>{{3, 4}, {5}}));
  // Every fence is submitted before the submission that waits for it.
  std::vector<bool> signalled(s->workloads.size(), false);
  for (const Segment& segment : plan.segments) {
    for (std::size_t producer : segment.wait_for) EXPECT_TRUE(signalled[producer]) << producer;
    if (segment.signals_fence) signalled[segment.workloads.back()] = true;
  }
  EXPECT_TRUE(signalled[0] && signalled[1]);
  // The render target read on the compute queue is transitioned on the direct queue.
  const DependencyPlan& rt = plan.dependency(5, 1);
  EXPECT_TRUE(rt.cross_queue);
  EXPECT_EQ(rt.barrier_queue, 0u);
  ASSERT_EQ(rt.barriers.size(), 1u);
  EXPECT_EQ(rt.barriers[0].placement, Placement::after_producer);
}

TEST(FramePlan, AQueueWithoutWorkStillSignalsTheFrame) {
  auto s = parse_scenario(R"(name = "idle"
[queues.direct]
type = "direct"
[queues.compute]
type = "compute"
[[workload]]
name = "A"
queue = "direct"
)",
                          "idle.toml");
  ASSERT_TRUE(s.ok()) << s.error().message;
  const FramePlan plan = plan_frame(*s);
  ASSERT_EQ(plan.segments.size(), 2u);
  EXPECT_EQ(plan.first_segment_of_queue[1], plan.last_segment_of_queue[1]);
  EXPECT_TRUE(plan.segments[plan.first_segment_of_queue[1]].workloads.empty());
}

TEST(FramePlan, AConsumerReadsAtMostFourOutputsOfEachKind) {
  std::string text = "name = \"wide\"\n[queues.direct]\ntype = \"direct\"\n";
  for (int p = 0; p < 5; ++p)
    text += "[[workload]]\nname = \"P" + std::to_string(p) + "\"\nqueue = \"direct\"\n";
  const std::string consumer = "[[workload]]\nname = \"C\"\nqueue = \"direct\"\ndepends_on = ";
  auto five =
      parse_scenario(text + consumer + "[\"P0\", \"P1\", \"P2\", \"P3\", \"P4\"]\n", "wide.toml");
  ASSERT_FALSE(five.ok());
  EXPECT_NE(five.error().message.find("[too-many-producers]"), std::string::npos)
      << five.error().message;
  auto four_read = parse_scenario(text + consumer +
                                      "[\"P0\", \"P1\", \"P2\", \"P3\", { workload = "
                                      "\"P4\", reads_output = false }]\n",
                                  "wide.toml");
  EXPECT_TRUE(four_read.ok()) << four_read.error().message;
}

// Two frames of a three-workload scenario with known times.
struct Lab {
  Scenario scenario;
  ScenarioTimeline timeline;
};

Lab lab() {
  Lab l;
  l.scenario = *resolve_scenario("three-dispatches");
  // frame, workload, poll start, poll end: A 0-50, B 0-100 (overlaps A), C 110-160 (after
  // both); frame 1: C starts 5 µs before A ends (a broken barrier).
  const double times[2][3][2] = {{{0, 50}, {0, 100}, {110, 160}}, {{0, 50}, {10, 100}, {45, 95}}};
  for (std::uint32_t f = 0; f < 2; ++f)
    for (std::size_t w = 0; w < 3; ++w) {
      WorkloadFrameRecord r;
      r.frame = f;
      r.workload = w;
      r.poll_start_us = times[f][w][0];
      r.poll_end_us = times[f][w][1];
      l.timeline.records.push_back(r);
    }
  return l;
}

TEST(DependencyAnalysis, GapIsConsumerStartMinusProducerEnd) {
  const Lab l = lab();
  const auto rows = dependency_gaps(l.scenario, l.timeline);
  ASSERT_EQ(rows.size(), 1u);  // C <- A, poll clock only
  EXPECT_EQ(rows[0].consumer, 2u);
  EXPECT_EQ(rows[0].clock, Clock::poll);
  EXPECT_EQ(rows[0].frames, 2u);
  EXPECT_DOUBLE_EQ(*rows[0].gap_min_us, -5.0);
  EXPECT_DOUBLE_EQ(*rows[0].gap_max_us, 60.0);
  EXPECT_EQ(rows[0].early_frames, 1u);
  const std::string csv = dependencies_csv(l.scenario, rows);
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "scenario,producer,consumer,barrier,cross_queue,d3d12,clock,frames,gap_p5_us,"
            "gap_p50_us,gap_p95_us,gap_min_us,gap_max_us,early_frames,disturbed_frames,"
            "gap_p50_low_us,gap_p50_high_us");
  EXPECT_NE(csv.find("three-dispatches,Compute A,Compute C,legacy,false,TRANSITION "
                     "unordered_access -> non_pixel_shader_resource,poll,2,"),
            std::string::npos)
      << csv;
}

// On the poll clock a frame whose consumer start or producer end was disturbed is left out and
// counted; the windows bound the p50 gap: the consumer may have started up to its start's
// window earlier, the producer ended up to its end's window earlier.
TEST(DependencyAnalysis, DisturbedStampsAreLeftOutAndTheWindowsBoundTheGap) {
  Lab l = lab();
  for (WorkloadFrameRecord& r : l.timeline.records) {
    r.poll_start_window_us = 2.0;
    r.poll_end_window_us = 3.0;
  }
  auto rows = dependency_gaps(l.scenario, l.timeline);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].disturbed_frames, 0u);
  // Gaps 60 and -5: p50 27.5; lows 58 and -7 (p50 25.5), highs 63 and -2 (p50 30.5).
  EXPECT_DOUBLE_EQ(*rows[0].gap_us[1], 27.5);
  EXPECT_DOUBLE_EQ(*rows[0].gap_p50_low_us, 25.5);
  EXPECT_DOUBLE_EQ(*rows[0].gap_p50_high_us, 30.5);
  // Frame 1's consumer (C) start disturbed: only frame 0's gap is left.
  l.timeline.records[5].poll_disturbed = kPollStartDisturbed;
  rows = dependency_gaps(l.scenario, l.timeline);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].frames, 1u);
  EXPECT_EQ(rows[0].disturbed_frames, 1u);
  EXPECT_EQ(rows[0].early_frames, 0u) << "the broken frame's start was the disturbed one";
  EXPECT_DOUBLE_EQ(*rows[0].gap_us[1], 60.0);
  // The overlap of a pair with a disturbed stamp leaves that frame out too.
  const auto overlaps = pairwise_overlap(l.scenario, l.timeline);
  for (const OverlapRow& o : overlaps) {
    const bool with_c = o.b == 2;
    EXPECT_EQ(o.disturbed_frames, with_c ? 1u : 0u) << o.a << "," << o.b;
    EXPECT_EQ(o.frames, with_c ? 1u : 2u) << o.a << "," << o.b;
  }
}

TEST(DependencyAnalysis, OverlapIsSharedTimeOverTheShorterDuration) {
  const Lab l = lab();
  const auto rows = pairwise_overlap(l.scenario, l.timeline);
  ASSERT_EQ(rows.size(), 3u);  // (A,B), (A,C), (B,C) on the poll clock
  const OverlapRow& ab = rows[0];
  EXPECT_EQ(ab.a, 0u);
  EXPECT_EQ(ab.b, 1u);
  EXPECT_FALSE(ab.dependent);
  EXPECT_TRUE(ab.same_queue);
  EXPECT_EQ(ab.overlapped_frames, 2u);
  EXPECT_DOUBLE_EQ(*ab.overlap_max, 1.0);  // A lies within B in frame 0
  const OverlapRow& ac = rows[1];
  EXPECT_TRUE(ac.dependent);
  EXPECT_EQ(ac.overlapped_frames, 1u);
  EXPECT_DOUBLE_EQ(*ac.overlap_max, 0.1);  // 5 µs of a 50 µs workload
  const std::string csv = overlap_csv(l.scenario, rows);
  EXPECT_NE(csv.find("three-dispatches,Compute A,Compute C,true,dependent,poll,2,1,"),
            std::string::npos)
      << csv;
}

}  // namespace
}  // namespace gpuoverlap
