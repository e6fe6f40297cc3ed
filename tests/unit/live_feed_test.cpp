// run --live's hand-over (viewer/live_feed.h): a run's frames become the records the results
// readers make, and the window's thread takes snapshots while the run's thread adds frames
// (run under ThreadSanitizer in CI).
#include "viewer/live_feed.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "analysis/results.h"
#include "scenarios/presets.h"
#include "timeline/export.h"
#include "unit/temp_dir.h"
#include "viewer/scene.h"

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
  EXPECT_EQ(s.meta.device.name, "test GPU");
  EXPECT_EQ(s.meta.queues.size(), scenario->queues.size());
  // Names, queue and dependency columns as records.csv writes them.
  const RecordRow& b = s.records[1];
  EXPECT_EQ(b.workload, scenario->workloads[1].name);
  EXPECT_EQ(b.queue, scenario->queues[scenario->workloads[1].queue].name);
  EXPECT_EQ(b.depends_on, scenario->workloads[0].name);
  EXPECT_EQ(b.barrier, "legacy");
  EXPECT_EQ(s.records[0].barrier, "none");
  EXPECT_EQ(s.records[scenario->workloads.size()].status, RecordStatus::timeout);
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

// The live view and the same run read back from disk are one model: the records and frames the
// feed hands the window equal what load_results reads from records.csv.gz and frames.csv, and
// so does every scene the window draws from them (each frame's timeline and the medians, on
// every clock; the frame strip; the overlap matrix). Times are multiples of 1/8 µs, which the
// CSV's three decimals hold exactly.
class LiveAndDisk : public TempDir {};

TEST_F(LiveAndDisk, DrawIdenticalScenes) {
  auto scenario = resolve_scenario("three-dispatches-split-event");
  ASSERT_TRUE(scenario.ok()) << scenario.error().message;
  LiveFeed feed({{"api", "Vulkan"}, {"name", "test GPU"}});
  const nlohmann::json facts = {{"clocks", {{"timestamp_queries", true}}}};
  feed.begin_scenario(*scenario, facts);
  ScenarioTimeline timeline;
  for (std::uint32_t f = 0; f < 6; ++f) {
    FrameRecord frame;
    frame.frame = f;
    frame.cpu_start_us = 1000.0 * f;
    frame.frame_interval_us = f == 0 ? std::optional<double>() : 1000.125;
    frame.gpu_span_us = 300.5 + f;
    frame.status = f == 4 ? RecordStatus::timeout : RecordStatus::ok;
    std::vector<WorkloadFrameRecord> records;
    double at_us = 0.25 * f;
    for (std::size_t w = 0; w < scenario->workloads.size(); ++w) {
      WorkloadFrameRecord r;
      r.frame = f;
      r.workload = w;
      r.poll_start_us = at_us;
      r.poll_end_us = at_us + 80.375 + 0.125 * static_cast<double>(w * f % 5);
      if (f != 2) r.ts_start_us = at_us + 0.5, r.ts_end_us = *r.poll_end_us - 0.5;
      r.status = frame.status;
      r.frame_t0_us = 1000.0 * f;
      r.disagreements = f == 3 && w == 1 ? 1u : 0u;
      r.poll_start_window_us = 0.125 * static_cast<double>(w + 1);
      r.poll_end_window_us = f == 5 && w == 0 ? 12.5 : 0.25;
      r.poll_disturbed = f == 5 && w == 0 ? kPollEndDisturbed : 0u;
      at_us = *r.poll_end_us + 2.625;
      records.push_back(r);
    }
    feed.add_frame(*scenario, frame, records);
    timeline.frames.push_back(frame);
    timeline.records.insert(timeline.records.end(), records.begin(), records.end());
  }
  std::uint64_t version = 0;
  const auto live = feed.snapshot(version);
  ASSERT_TRUE(live);
  ASSERT_EQ(live->scenarios.size(), 1u);
  const LoadedScenario& shown = live->scenarios[0];

  // The run writes what it measured, with the meta the window had.
  ASSERT_TRUE(
      write_scenario_results(dir_ / scenario->name, *scenario, timeline, shown.meta_json).ok());
  auto loaded = load_scenario_results(dir_ / scenario->name);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  const LoadedScenario& read = *loaded;

  EXPECT_EQ(read.name, shown.name);
  EXPECT_EQ(read.workloads, shown.workloads);
  ASSERT_EQ(read.records.size(), shown.records.size());
  for (std::size_t i = 0; i < read.records.size(); ++i)
    EXPECT_TRUE(read.records[i] == shown.records[i]) << "record " << i;
  ASSERT_EQ(read.frames.size(), shown.frames.size());
  for (std::size_t i = 0; i < read.frames.size(); ++i)
    EXPECT_TRUE(read.frames[i] == shown.frames[i]) << "frame " << i;

  EXPECT_EQ(available_clocks(read), available_clocks(shown));
  ASSERT_EQ(available_clocks(read).size(), 2u) << "poll and ts";
  for (Clock clock : available_clocks(read)) {
    EXPECT_TRUE(frame_spans(read, clock) == frame_spans(shown, clock)) << to_string(clock);
    EXPECT_TRUE(overlap_matrix(read, clock) == overlap_matrix(shown, clock)) << to_string(clock);
    EXPECT_TRUE(timeline_input(read, clock, std::nullopt) ==
                timeline_input(shown, clock, std::nullopt))
        << to_string(clock);
    for (std::uint32_t f : frame_numbers(read))
      EXPECT_TRUE(timeline_input(read, clock, f) == timeline_input(shown, clock, f))
          << to_string(clock) << " frame " << f;
  }
  EXPECT_EQ(frame_numbers(read), frame_numbers(shown));
}

}  // namespace gpuoverlap::viewer
