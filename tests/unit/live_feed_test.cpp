// run --live's hand-over (viewer/live_feed.h): a run's frames become the records the results
// readers make, and the window's thread takes snapshots while the run's thread adds frames
// (run under ThreadSanitizer in CI).
#include "viewer/live_feed.h"

#include <gtest/gtest.h>

#include <thread>

#include "scenarios/presets.h"

namespace gpuoverlap::viewer {
namespace {

std::vector<WorkloadFrameRecord> frame_records(const Scenario& s, std::uint32_t frame) {
  std::vector<WorkloadFrameRecord> out;
  for (std::size_t w = 0; w < s.workloads.size(); ++w) {
    WorkloadFrameRecord r;
    r.frame = frame;
    r.workload = w;
    r.poll_start_us = 10.0 * static_cast<double>(w);
    r.poll_end_us = 10.0 * static_cast<double>(w) + 5;
    r.status = w == 0 && frame == 1 ? RecordStatus::timeout : RecordStatus::ok;
    out.push_back(r);
  }
  return out;
}

TEST(LiveFeed, FramesBecomeTheRecordsTheResultsReadersMake) {
  auto scenario = resolve_scenario("default");
  ASSERT_TRUE(scenario.ok()) << scenario.error().message;
  LiveFeed feed;
  std::uint64_t version = 0;
  EXPECT_FALSE(feed.snapshot(version)) << "a fresh feed has nothing new";
  for (std::uint32_t f = 0; f < 3; ++f) {
    const auto records = frame_records(*scenario, f);
    feed.add_frame(*scenario, FrameRecord{}, records);
  }
  feed.set_device({{"api", "Vulkan"}, {"name", "test GPU"}});
  const auto run = feed.snapshot(version);
  ASSERT_TRUE(run);
  ASSERT_EQ(run->scenarios.size(), 1u);
  const LoadedScenario& s = run->scenarios[0];
  EXPECT_EQ(s.name, "default");
  EXPECT_EQ(s.workloads.size(), scenario->workloads.size());
  ASSERT_EQ(s.records.size(), 3 * scenario->workloads.size());
  EXPECT_EQ(s.meta["device"]["name"], "test GPU");
  EXPECT_EQ(s.meta["queues"].size(), scenario->queues.size());
  // Names, queue and dependency columns as records.csv writes them.
  const LoadedRecord& b = s.records[1];
  EXPECT_EQ(b.workload, scenario->workloads[1].name);
  EXPECT_EQ(b.queue, scenario->queues[scenario->workloads[1].queue].name);
  EXPECT_EQ(b.depends_on, scenario->workloads[0].name);
  EXPECT_EQ(b.barrier, "legacy");
  EXPECT_EQ(s.records[0].barrier, "none");
  EXPECT_EQ(s.records[scenario->workloads.size()].status, "timeout");
  EXPECT_EQ(feed.frames(), 3u);
  EXPECT_FALSE(feed.finished());
  feed.finish(0);
  EXPECT_TRUE(feed.finished());
  EXPECT_TRUE(feed.snapshot(version)) << "the end is news too";
}

TEST(LiveFeed, TheWindowSnapshotsWhileTheRunAddsFrames) {
  auto scenario = resolve_scenario("three-dispatches");
  ASSERT_TRUE(scenario.ok());
  LiveFeed feed;
  constexpr std::uint32_t kFrames = 300;
  std::thread run([&] {
    for (std::uint32_t f = 0; f < kFrames; ++f) {
      const auto records = frame_records(*scenario, f);
      feed.add_frame(*scenario, FrameRecord{}, records);
    }
    feed.finish(0);
  });
  std::uint64_t version = 0;
  std::size_t last = 0, snapshots = 0;
  // Until the end is seen; every snapshot is a prefix of the run, never shrinking.
  for (bool ended = false; !ended;) {
    ended = feed.finished();
    if (auto snapshot = feed.snapshot(version); snapshot && !snapshot->scenarios.empty()) {
      const std::size_t now = snapshot->scenarios[0].records.size();
      EXPECT_GE(now, last);
      EXPECT_EQ(now % scenario->workloads.size(), 0u) << "whole frames only";
      last = now;
      ++snapshots;
    }
    std::this_thread::yield();
  }
  run.join();
  EXPECT_EQ(last, kFrames * scenario->workloads.size());
  EXPECT_GE(snapshots, 1u);
}

}  // namespace
}  // namespace gpuoverlap::viewer
