// What the viewer shows of a scenario (viewer/scene.h), from results in memory.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "analysis/verdict.h"
#include "viewer/scene.h"

namespace gpuoverlap::viewer {
namespace {

LoadedScenario three_frames() {
  LoadedScenario s;
  s.name = "demo";
  s.workloads = {"A", "B"};
  s.meta_json = nlohmann::json::parse(R"({
    "device": {"api": "Vulkan", "name": "NVIDIA H100", "driver_name": "NVIDIA",
               "driver_info": "580.159.04"},
    "queues": [{"name": "direct", "type": "direct", "family": 0, "queue_index": 0,
                "priority_requested": "normal", "priority_granted": "normal"},
               {"name": "async", "type": "compute", "family": 2, "queue_index": 0,
                "priority_requested": "high", "priority_granted": "high"}]})");
  read_meta(s);
  for (std::uint32_t f = 0; f < 3; ++f) {
    RecordRow a;
    a.frame = f, a.workload = "A", a.queue = "direct", a.queue_type = QueueType::direct,
    a.kind = WorkloadKind::compute, a.status = RecordStatus::ok;
    a.poll_start_us = 10.0 * f, a.poll_end_us = 10.0 * f + 100;
    a.ts_start_us = 1.0, a.ts_end_us = 90.0;
    RecordRow b = a;
    b.workload = "B", b.queue = "async", b.queue_type = QueueType::compute,
    b.kind = WorkloadKind::graphics;
    b.depends_on = "A", b.barrier = "split-event";
    b.poll_start_us = 100.0 + 10 * f, b.poll_end_us = 200.0 + 10 * f;
    b.ts_start_us.reset(), b.ts_end_us.reset();
    if (f == 1) b.flags = "start:poll-ts";
    s.records.push_back(a);
    s.records.push_back(b);
  }
  RecordRow lost;  // a timed-out frame: listed, never drawn
  lost.frame = 3, lost.workload = "A", lost.queue = "direct", lost.status = RecordStatus::timeout;
  lost.poll_start_us = 5000.0, lost.poll_end_us = 9000.0;
  s.records.push_back(lost);
  return s;
}

TEST(ViewerScene, OneFrameIsDrawnFromItsRecordsWithLanesFromMeta) {
  const LoadedScenario s = three_frames();
  EXPECT_EQ(frame_numbers(s), (std::vector<std::uint32_t>{0, 1, 2, 3}));
  const layout::TimelineInput in = timeline_input(s, Clock::poll, 1);
  ASSERT_EQ(in.queues.size(), 2u);
  EXPECT_EQ(in.queues[0].label, "direct (DIRECT)");
  EXPECT_EQ(in.queues[1].label, "async (COMPUTE, high)") << "a granted priority is shown";
  ASSERT_EQ(in.workloads.size(), 2u);
  EXPECT_EQ(*in.workloads[0].start_us, 10);
  EXPECT_EQ(*in.workloads[0].end_us, 110);
  EXPECT_EQ(in.workloads[1].queue, "async");
  EXPECT_TRUE(in.workloads[1].graphics);
  EXPECT_TRUE(in.workloads[1].flagged);
  EXPECT_FALSE(in.workloads[0].flagged);
  // Whiskers over every ok frame: the timed-out frame's 9000 us is not among them.
  EXPECT_NEAR(*in.workloads[0].whisker_start_us, 1, 1e-9) << "p5 of 0, 10, 20";
  EXPECT_LT(*in.workloads[0].whisker_end_us, 200);
  ASSERT_EQ(in.dependencies.size(), 1u) << "one edge however many frames name it";
  EXPECT_EQ(in.dependencies[0].producer, "A");
  EXPECT_EQ(in.dependencies[0].consumer, "B");
  EXPECT_EQ(in.dependencies[0].barrier, "split-event");
}

TEST(ViewerScene, AFramesTimelineShowsTheBackgroundCompilesThatRanDuringIt) {
  LoadedScenario s = three_frames();
  // Frame 1 starts 8 ms after frame 0 and ends its last workload at 210 us.
  for (RecordRow& r : s.records) r.frame_t0_us = 8000.0 * r.frame;
  LoadedBackgroundTask across;  // begins before frame 1 and ends inside it
  across.label = "compile #1", across.worker = 0, across.start_us = 7000, across.finish_us = 8050;
  LoadedBackgroundTask later = across;  // the same thread's next compile, after frame 1
  later.label = "compile #2", later.start_us = 9000, later.finish_us = 12000;
  LoadedBackgroundTask control;  // an unmanaged thread still running when the run ended
  control.managed = false, control.label = "unmanaged", control.worker = 0;
  control.start_us = 8100;
  LoadedBackgroundTask cancelled;  // never ran: no lane
  cancelled.label = "compile #3";
  s.background_tasks = {across, later, control, cancelled};
  const layout::TimelineInput in = timeline_input(s, Clock::poll, 1);
  ASSERT_EQ(in.queues.size(), 3u);
  EXPECT_EQ(in.queues[2].name, "background");
  EXPECT_EQ(in.queues[2].label, "background compiles (CPU threads)");
  ASSERT_EQ(in.workloads.size(), 4u);
  const layout::WorkloadTiming& idle = in.workloads[2];
  EXPECT_EQ(idle.name, "idle thread 0");
  EXPECT_EQ(idle.queue, "background");
  EXPECT_EQ(idle.start_us, 0.0) << "clipped to the frame's t0";
  EXPECT_EQ(idle.end_us, 50.0);
  const layout::WorkloadTiming& unmanaged = in.workloads[3];
  EXPECT_EQ(unmanaged.name, "unmanaged thread 0");
  EXPECT_EQ(unmanaged.start_us, 100.0);
  EXPECT_EQ(unmanaged.end_us, 210.0) << "no finish: to the frame's last end";
  // Frame 0 (t0 0, last end 200): the first compile is running from 7 ms, after its end.
  const layout::TimelineInput first = timeline_input(s, Clock::poll, 0);
  ASSERT_EQ(first.workloads.size(), 4u) << "every thread's lane, drawn or not";
  EXPECT_FALSE(first.workloads[2].start_us);
  // The medians over every frame have no single frame's compiles.
  EXPECT_EQ(timeline_input(s, Clock::poll, std::nullopt).workloads.size(), 2u);
}

TEST(ViewerScene, AFramesTimelineShowsTheFrameLoopsWaitsByTheKernelsRecord) {
  LoadedScenario s = three_frames();
  // Frame 1: t0 at 8 ms, its last workload ends at 210 us.
  for (RecordRow& r : s.records) r.frame_t0_us = 8000.0 * r.frame;
  LoadedSchedWait preempted;  // ready without a CPU from 8020 to 8060 us
  preempted.thread = "frame loop", preempted.off_us = 8020, preempted.on_us = 8060;
  preempted.runnable_us = 40, preempted.lost_by = "yielded", preempted.text = "spinner held it";
  LoadedSchedWait slept;  // asleep 8100-8150, then 10 us ready after its wake-up
  slept.thread = "frame loop", slept.off_us = 8100, slept.on_us = 8160, slept.runnable_us = 10;
  slept.lost_by = "blocked", slept.blocked = true, slept.text = "woken by worker 0";
  LoadedSchedWait worker = preempted;  // a worker's wait: not the frame loop's lanes
  worker.thread = "worker 0";
  LoadedSchedWait other_frame = preempted;  // long before frame 1
  other_frame.off_us = 100, other_frame.on_us = 150;
  s.sched_waits = {preempted, slept, worker, other_frame};
  const layout::TimelineInput in = timeline_input(s, Clock::poll, 1);
  ASSERT_EQ(in.queues.size(), 3u);
  EXPECT_EQ(in.queues[2].name, "frame loop (kernel record)");
  ASSERT_EQ(in.workloads.size(), 4u);
  const layout::WorkloadTiming& ready = in.workloads[2];
  EXPECT_EQ(ready.cpu_state, "runnable");
  EXPECT_EQ(ready.segments, (std::vector<std::pair<double, double>>{{20, 60}, {150, 160}}));
  EXPECT_EQ(ready.detail, "spinner held it\nwoken by worker 0");
  const layout::WorkloadTiming& asleep = in.workloads[3];
  EXPECT_EQ(asleep.cpu_state, "asleep");
  EXPECT_EQ(asleep.segments, (std::vector<std::pair<double, double>>{{100, 150}}));
  // Laid out: a bar per stretch in the lane, and none for the lanes' absent start and end.
  layout::View view = layout::fit(in, layout::View{});
  const layout::TimelineLayout laid = layout::layout_timeline(in, view);
  std::size_t ready_bars = 0, asleep_bars = 0;
  for (const layout::Bar& bar : laid.bars) {
    if (bar.workload == 2) ++ready_bars;
    if (bar.workload == 3) ++asleep_bars;
  }
  EXPECT_EQ(ready_bars, 2u);
  EXPECT_EQ(asleep_bars, 1u);
  // Without the record, no such lanes.
  s.sched_waits.clear();
  EXPECT_EQ(timeline_input(s, Clock::poll, 1).queues.size(), 2u);
}

TEST(ViewerScene, AFrameOnThePollClockCarriesEachStampsWindowForTheHoverText) {
  LoadedScenario s = three_frames();
  for (RecordRow& r : s.records)
    if (r.workload == "A" && r.frame == 1) {
      r.poll_start_window_us = 0.25, r.poll_end_window_us = 14.5;
      r.poll_disturbed = kPollEndDisturbed;
    }
  const layout::TimelineInput poll = timeline_input(s, Clock::poll, 1);
  EXPECT_EQ(poll.workloads[0].start_window_us, 0.25);
  EXPECT_EQ(poll.workloads[0].end_window_us, 14.5);
  EXPECT_TRUE(poll.workloads[0].disturbed);
  EXPECT_FALSE(poll.workloads[1].disturbed);
  EXPECT_FALSE(timeline_input(s, Clock::ts, 1).workloads[0].start_window_us)
      << "the windows are the poll clock's";
  EXPECT_FALSE(timeline_input(s, Clock::poll, std::nullopt).workloads[0].disturbed)
      << "medians are no frame";
}

TEST(ViewerScene, TheMediansAndEachClockComeFromTheOkRecords) {
  const LoadedScenario s = three_frames();
  const layout::TimelineInput medians = timeline_input(s, Clock::poll, std::nullopt);
  EXPECT_EQ(*medians.workloads[0].start_us, 10);
  EXPECT_EQ(*medians.workloads[1].end_us, 210);
  const layout::TimelineInput ts = timeline_input(s, Clock::ts, 0);
  EXPECT_EQ(*ts.workloads[0].end_us, 90);
  EXPECT_FALSE(ts.workloads[1].start_us) << "B has no timestamps: a lane, no bar";
  EXPECT_EQ(available_clocks(s), (std::vector<Clock>{Clock::poll, Clock::ts}));
  const std::vector<FrameSpan> spans = frame_spans(s, Clock::poll);
  ASSERT_EQ(spans.size(), 3u) << "the timed-out frame has no span";
  EXPECT_EQ(spans[2].frame, 2u);
  EXPECT_EQ(spans[2].span_us, 220 - 20);
}

// A run on three devices as `run --device all` writes it (analysis/results.h names each
// scenario with its device's folder in front): gpu1 ran `default` later in its frame and has
// no frame 1; gpu2 has no `default` (it failed before it).
LoadedRun three_devices() {
  LoadedRun run;
  run.run = nlohmann::json::parse(R"({"devices": [
    {"index": 0, "directory": "gpu0", "device": {"name": "NVIDIA H100"}, "status": "ok"},
    {"index": 1, "directory": "gpu1", "device": {"name": "NVIDIA H200"}, "status": "ok"},
    {"index": 2, "directory": "gpu2", "device": {}, "status": "failed"},
    {"index": 3, "device": {"name": "no folder"}}]})");
  LoadedScenario first = three_frames();
  first.name = "gpu0/default";
  LoadedScenario other = three_frames();
  other.name = "gpu0/other";
  LoadedScenario later = three_frames();
  later.name = "gpu1/default";
  std::erase_if(later.records, [](const RecordRow& r) { return r.frame == 1; });
  for (RecordRow& r : later.records) *r.poll_start_us += 1000, *r.poll_end_us += 1000;
  LoadedScenario failed = three_frames();
  failed.name = "gpu2/other";
  run.scenarios = {first, other, later, failed};
  return run;
}

TEST(ViewerDevices, ARunOnSeveralDevicesNamesEachDevicesFolderAndName) {
  const LoadedRun run = three_devices();
  const std::vector<RunDevice> devices = run_devices(run);
  EXPECT_EQ(devices, (std::vector<RunDevice>{
                         {"gpu0", "NVIDIA H100"}, {"gpu1", "NVIDIA H200"}, {"gpu2", "?"}}))
      << "an entry without a folder is left out; a device without a name reads ?";
  EXPECT_EQ(split_device(devices, "gpu1/default"), (DeviceScenarioName{1, "default"}));
  EXPECT_EQ(split_device(devices, "gpu0/study/managed/round-1"),
            (DeviceScenarioName{0, "study/managed/round-1"}));
  EXPECT_EQ(split_device(devices, "gpu10/default"),
            (DeviceScenarioName{std::nullopt, "gpu10/default"}));
  EXPECT_EQ(split_device(devices, "default"), (DeviceScenarioName{std::nullopt, "default"}));
  // A run on one device, a lone scenario: no devices, whatever the names.
  LoadedRun one;
  one.scenarios = {three_frames()};
  EXPECT_TRUE(run_devices(one).empty());
  for (const char* hostile :
       {R"({"devices": 3})", R"({"devices": [1, null, {"directory": 7}]})", "[]", "null"}) {
    one.run = nlohmann::json::parse(hostile);
    EXPECT_TRUE(run_devices(one).empty()) << hostile;
  }
}

TEST(ViewerDevices, AScenarioIsFoundByItsNameOrByItsNameBelowTheFirstDevicesFolder) {
  const LoadedRun run = three_devices();
  const auto devices = run_devices(run);
  EXPECT_EQ(find_scenario(run, devices, "gpu1/default"), 2u);
  EXPECT_EQ(find_scenario(run, devices, "default"), 0u) << "the first device's";
  EXPECT_EQ(find_scenario(run, devices, "other"), 1u);
  EXPECT_FALSE(find_scenario(run, devices, "nothing"));
  EXPECT_FALSE(find_scenario(run, {}, "default")) << "a run on one device: names as they are";
}

TEST(ViewerDevices, EveryDeviceShowsTheScenarioChosenOnAnyDeviceFromItsOwnFrameStart) {
  const LoadedRun run = three_devices();
  const auto devices = run_devices(run);
  for (std::size_t chosen : {std::size_t{0}, std::size_t{2}}) {
    SCOPED_TRACE(run.scenarios[chosen].name);
    const std::vector<DeviceBand> bands = device_bands(run, devices, chosen, Clock::poll, 1);
    ASSERT_EQ(bands.size(), 3u) << "a band per device, in run.json's order";
    EXPECT_EQ(bands[0].label, "gpu0: NVIDIA H100");
    EXPECT_EQ(bands[1].label, "gpu1: NVIDIA H200");
    EXPECT_EQ(bands[2].label, "gpu2: ?");
    EXPECT_EQ(bands[0].scenario, 0u);
    EXPECT_EQ(bands[1].scenario, 2u);
    EXPECT_FALSE(bands[2].scenario) << "gpu2 has no default";
    EXPECT_FALSE(bands[2].input);
    // gpu0 has frame 1; gpu1 has not, and shows its medians.
    EXPECT_EQ(bands[0].frame, 1u);
    EXPECT_FALSE(bands[1].frame);
    ASSERT_TRUE(bands[0].input && bands[1].input);
    EXPECT_EQ(*bands[0].input, timeline_input(run.scenarios[0], Clock::poll, 1));
    EXPECT_EQ(*bands[1].input, timeline_input(run.scenarios[2], Clock::poll, std::nullopt));
    EXPECT_EQ(*bands[0].input->workloads[0].start_us, 10) << "frame 1 of gpu0";
    EXPECT_EQ(*bands[1].input->workloads[0].start_us, 1010)
        << "gpu1's medians, from its own frames' starts";
    EXPECT_TRUE(bands[0].has_clock && bands[1].has_clock);
  }
  // The medians for all; a clock a device has no value on is said.
  const auto medians = device_bands(run, devices, 0, Clock::clk, std::nullopt);
  EXPECT_FALSE(medians[0].frame);
  EXPECT_FALSE(medians[0].has_clock);
  // One time range for all: it holds gpu0's work from 0 us and gpu1's to 1220 us.
  const layout::View view = fit_bands(device_bands(run, devices, 0, Clock::poll, 1), {});
  EXPECT_LE(view.begin_us, 0);
  EXPECT_GE(view.end_us, 1220);
  // A run on one device, and a scenario below no device's folder: no bands (shown alone).
  EXPECT_TRUE(device_bands(run, {}, 0, Clock::poll, 1).empty());
  LoadedRun odd = run;
  odd.scenarios[0].name = "default";
  EXPECT_TRUE(device_bands(odd, devices, 0, Clock::poll, 1).empty());
}

TEST(ViewerScene, DeviceLinesNameTheDeviceDriverAndEachQueuesPriority) {
  const auto lines = device_lines(three_frames().meta);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "Vulkan on NVIDIA H100 (driver NVIDIA 580.159.04)");
  EXPECT_EQ(lines[2], "queue async: COMPUTE on family 2 index 0, priority high (requested high)");
  // meta.json is untrusted: a wrong shape reads "?", never throws.
  for (const char* text : {"null", "[]", R"({"device": 3, "queues": {"x": 1}})",
                           R"({"queues": [null, 5, {"name": 7}]})"}) {
    const auto hostile = device_lines(read_scenario_meta(nlohmann::json::parse(text)));
    EXPECT_FALSE(hostile.empty()) << text;
    LoadedScenario s = three_frames();
    s.meta_json = nlohmann::json::parse(text);
    read_meta(s);
    EXPECT_EQ(timeline_input(s, Clock::poll, 0).queues.size(), 2u)
        << text << ": lanes from the records";
  }
}

TEST(ViewerScene, TheOverlapMatrixCountsFramesWhoseSpansIntersect) {
  LoadedScenario s = three_frames();
  // On the poll clock A runs 10f..10f+100 and B 100+10f..200+10f: they touch, never overlap.
  auto cells = overlap_matrix(s, Clock::poll);
  ASSERT_EQ(cells.size(), 1u);
  EXPECT_EQ(cells[0].a, "A");
  EXPECT_EQ(cells[0].b, "B");
  EXPECT_EQ(cells[0].frames, 3u) << "the timed-out frame is not counted";
  EXPECT_EQ(cells[0].overlapped, 0u);
  for (RecordRow& r : s.records)
    if (r.workload == "B" && r.frame != 0) *r.poll_start_us -= 30;  // 30 us over A's end
  cells = overlap_matrix(s, Clock::poll);
  EXPECT_EQ(cells[0].overlapped, 2u);
  EXPECT_DOUBLE_EQ(cells[0].overlap_p50_us, 30);
  EXPECT_EQ(overlap_matrix(s, Clock::ts)[0].frames, 0u) << "B has no timestamps";
}

TEST(ViewerScene, TheOverlapGridHasACellPerPairBothWaysRoundAndMarksDependentPairs) {
  LoadedScenario s = three_frames();
  s.workloads.push_back("C");  // never ran: a row and a column, no pair in the matrix
  for (RecordRow& r : s.records)
    if (r.workload == "B" && r.frame != 0) *r.poll_start_us -= 30;
  const std::vector<OverlapCell> matrix = overlap_matrix(s, Clock::poll);
  ASSERT_EQ(matrix.size(), 3u);
  EXPECT_TRUE(matrix[0].dependent) << "B depends on A";
  EXPECT_FALSE(matrix[1].dependent) << "A and C";
  const OverlapGrid grid = overlap_grid(s.workloads, matrix);
  ASSERT_EQ(grid.cells.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_FALSE(grid.cells[i][i]) << "the diagonal is empty";
    for (std::size_t j = 0; j < 3; ++j) EXPECT_EQ(grid.cells[i][j], grid.cells[j][i]);
  }
  ASSERT_TRUE(grid.cells[0][1]);
  EXPECT_EQ(matrix[*grid.cells[0][1]].overlapped, 2u);
  EXPECT_EQ(matrix[*grid.cells[2][0]].b, "C");
  // A pair naming a workload the list does not have is left out, never indexed.
  const OverlapGrid partial = overlap_grid({"A", "C"}, matrix);
  ASSERT_TRUE(partial.cells[0][1]);
  EXPECT_EQ(matrix[*partial.cells[0][1]].b, "C");
}

// A preemption scenario's urgent jobs: latencies `starts_us` (ends 5 µs later), one failed
// where `failed`.
LoadedScenario preemption_cell(const std::string& name, const std::string& load,
                               const std::string& priority, const std::string& process,
                               const std::vector<double>& starts_us, bool failed = false) {
  LoadedScenario s;
  s.name = name;
  s.workloads = {"load", "urgent"};
  s.meta_json = {
      {"preemption",
       {{"spec",
         {{"load", load}, {"priority", priority}, {"process", process}, {"period_ms", 1.0}}},
        {"priority_granted", priority}}}};
  read_meta(s);
  for (std::size_t k = 0; k < starts_us.size(); ++k) {
    RecordRow u;
    u.frame = static_cast<std::uint32_t>(k), u.workload = "urgent", u.status = RecordStatus::ok;
    u.poll_start_us = starts_us[k], u.poll_end_us = starts_us[k] + 5;
    s.records.push_back(u);
  }
  if (failed) {
    RecordRow lost;
    lost.frame = static_cast<std::uint32_t>(starts_us.size()), lost.workload = "urgent";
    lost.status = RecordStatus::timeout;
    s.records.push_back(lost);
  }
  return s;
}

TEST(ViewerScene, ThePreemptionGridIsLoadByPriorityOfTheScenariosBesideTheOneShown) {
  LoadedRun run;
  run.scenarios.push_back(three_frames());  // not a preemption scenario
  run.scenarios.push_back(preemption_cell("m/long-high", "long", "high", "same", {10, 20, 30}));
  run.scenarios.push_back(
      preemption_cell("m/long-high-sep", "long", "high", "separate", {100, 2000}, true));
  run.scenarios.push_back(preemption_cell("m/big-realtime", "big", "realtime", "same", {50}));
  run.scenarios.push_back(preemption_cell("alone", "long", "normal", "same", {7}));
  EXPECT_FALSE(preemption_grid(run, 0, Clock::poll)) << "the scenario shown is no preemption";
  EXPECT_FALSE(preemption_grid(run, 99, Clock::poll));
  const auto grid = preemption_grid(run, 2, Clock::poll);
  ASSERT_TRUE(grid);
  EXPECT_EQ(grid->group, "m");
  EXPECT_EQ(grid->loads, (std::vector<std::string>{"long", "big"}));
  EXPECT_EQ(grid->columns, (std::vector<std::string>{"high", "high, 2nd process", "realtime"}));
  ASSERT_EQ(grid->entries.size(), 3u) << "the preset run alone is not in the matrix";
  EXPECT_FALSE(grid->cells[1][0]) << "big under high did not run";
  const PreemptionGridCell& same = grid->entries[*grid->cells[0][0]];
  EXPECT_EQ(same.scenario, 1u);
  EXPECT_EQ(*same.p50_us, 20);
  EXPECT_EQ(same.submissions, 3u);
  EXPECT_EQ(same.misses, 0u);
  const PreemptionGridCell& separate = grid->entries[*grid->cells[0][1]];
  EXPECT_EQ(separate.scenario, 2u);
  EXPECT_EQ(separate.submissions, 3u);
  EXPECT_EQ(separate.misses, 2u) << "one ended after its 1 ms period, one failed";
  EXPECT_EQ(grid->entries[*grid->cells[1][2]].scenario, 3u);
  // A preset run alone: a grid of the top level's preemption scenarios.
  const auto alone = preemption_grid(run, 4, Clock::poll);
  ASSERT_TRUE(alone);
  EXPECT_EQ(alone->group, "");
  ASSERT_EQ(alone->entries.size(), 1u);
  EXPECT_EQ(*alone->entries[0].p99_us, 7);
  // No urgent start on the clock: a cell without a latency.
  EXPECT_FALSE(preemption_grid(run, 4, Clock::ts)->entries[0].p99_us);
}

TEST(ViewerScene, TheForestHasPrimaryEndpointsThenDiagnosticsThatMovedAndTheDosesInOrder) {
  StudyVerdictTable table;
  auto row = [](std::string condition, std::string metric, bool primary, std::string verdict,
                double ratio) {
    VerdictRow r;
    r.condition = std::move(condition), r.metric = std::move(metric);
    r.role = primary ? EndpointRole::primary : EndpointRole::diagnostic;
    r.decision = *parse_decision(verdict), r.ratio_p50 = ratio;
    return r;
  };
  table.rows = {row("managed", "gpu_us", false, "diagnostic: within", 1.0),
                row("managed", "frame_us", true, "non-intrusive", 1.0),
                row("t4", "frame_us", true, "intrusive", 1.3),
                row("t1", "frame_us", true, "intrusive", 1.1),
                row("t1", "wake_us", false, "diagnostic: worse", 1.5),
                row("managed", "wake_us", false, "diagnostic: within", 1.0),
                row("t4", "tail_only_us", true, "intrusive", 800.0)};
  table.rows.back().tests = EndpointTests::tail;  // decided on its tail: no median curve
  EXPECT_EQ(forest_rows(table, false), (std::vector<std::size_t>{1, 2, 3, 6}))
      << "the primary rows, per endpoint in verdict.csv's order";
  EXPECT_EQ(forest_rows(table, true), (std::vector<std::size_t>{1, 2, 3, 6, 4}))
      << "primary rows first; of the diagnostics only the one that moved";
  EXPECT_TRUE(dose_response(table).empty()) << "no doses";
  table.doses = {{"t1", 1}, {"t4", 4}};
  const std::vector<DoseSeries> doses = dose_response(table);
  ASSERT_EQ(doses.size(), 1u) << "primary endpoints tested on their median only";
  EXPECT_EQ(doses[0].metric, "frame_us");
  EXPECT_EQ(doses[0].points, (std::vector<std::pair<std::uint32_t, std::size_t>>{{1, 3}, {4, 2}}));
  table.doses.pop_back();
  EXPECT_TRUE(dose_response(table).empty()) << "one dose is no curve";
}

TEST(ViewerScene, UrgentLatenciesAreTheUrgentJobsStartsInSubmissionOrder) {
  LoadedScenario s;
  s.name = "p";
  s.workloads = {"load", "urgent"};
  for (std::uint32_t k : {2u, 0u, 1u, 3u}) {
    RecordRow u;
    u.frame = k, u.workload = "urgent",
    u.status = k == 3 ? RecordStatus::timeout : RecordStatus::ok;
    u.ts_start_us = 100.0 * (k + 1), u.ts_end_us = 100.0 * (k + 1) + 5;
    u.frame_t0_us = 1000.0 * k;
    RecordRow l = u;
    l.workload = "load";
    s.records.push_back(u);
    s.records.push_back(l);
  }
  EXPECT_TRUE(urgent_latencies(s, Clock::ts).points.empty()) << "not a preemption scenario";
  s.meta_json = {{"preemption", nlohmann::json::object()}};
  read_meta(s);
  const UrgentLatencies l = urgent_latencies(s, Clock::ts, 3);
  ASSERT_EQ(l.points.size(), 3u) << "the timeout has no latency";
  EXPECT_EQ(l.points[0].submission, 0u);
  EXPECT_EQ(l.points[2].latency_us, 300);
  EXPECT_EQ(*l.points[1].submit_ms, 1.0);
  EXPECT_DOUBLE_EQ(l.bin_us, 100);
  EXPECT_EQ(l.histogram, (std::vector<std::size_t>{0, 1, 2})) << "100 in [100, 200), 300 last";
  EXPECT_TRUE(urgent_latencies(s, Clock::poll).points.empty()) << "no poll values";
}

TEST(ViewerScene, AStudysVerdictIsFoundAboveItsScenarioAndNeverAboveTheFolderOpened) {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("viewer-scene-" + std::to_string(getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "study" / "managed" / "round-1");
  LoadedScenario s = three_frames();
  s.directory = root / "study" / "managed" / "round-1";
  auto none = study_verdict(root, s);
  ASSERT_TRUE(none.ok()) << none.error().message;
  EXPECT_FALSE(*none) << "no verdict.csv: not a study";
  std::string header, row;
  const std::map<std::string_view, std::string> values = {
      {"condition", "managed"}, {"metric", "cpu_frame_us"}, {"ratio_p50", "1.01"},
      {"ci_low", "0.99"},       {"ci_high", "1.03"},        {"verdict", "non-intrusive"},
      {"pairing", "round"},     {"role", "primary"},        {"tests", "median+tail"}};
  for (std::string_view c : kVerdictColumns) {
    header += (header.empty() ? "" : ",") + std::string(c);
    row += (row.empty() && c == kVerdictColumns.front() ? "" : ",") +
           (values.count(c) ? values.at(c) : "0");
  }
  std::ofstream(root / "study" / "verdict.csv") << header << "\n" << row << "\n";
  auto found = study_verdict(root, s);
  ASSERT_TRUE(found.ok()) << found.error().message;
  ASSERT_TRUE(*found);
  EXPECT_EQ((*found)->file, root / "study" / "verdict.csv");
  ASSERT_EQ((*found)->rows.size(), 1u);
  EXPECT_EQ((*found)->rows[0].decision, Decision::non_intrusive);
  EXPECT_EQ((*found)->rows[0].ci_low, 0.99);
  EXPECT_EQ((*found)->rows[0].role, EndpointRole::primary);
  EXPECT_DOUBLE_EQ((*found)->p50_margin, 0.05) << "no verdict.json: the default margins";
  EXPECT_TRUE((*found)->doses.empty());
  // verdict.json beside it gives the margins and the control's doses, by threads.
  std::ofstream(root / "study" / "verdict.json") << R"({
    "settings": {"p50_margin": 0.02},
    "control_doses": [{"condition": "t4", "threads": 4, "verdict": "intrusive"},
                      {"condition": "t1", "threads": 1, "verdict": "inconclusive"}],
    "detected_from_threads": 4, "conditions": []})";
  auto with_json = study_verdict(root, s);
  ASSERT_TRUE(with_json.ok());
  EXPECT_DOUBLE_EQ((*with_json)->p50_margin, 0.02);
  EXPECT_DOUBLE_EQ((*with_json)->tail_margin, 0.01) << "absent: the default";
  ASSERT_EQ((*with_json)->doses.size(), 2u);
  EXPECT_EQ((*with_json)->doses[0].condition, "t1");
  EXPECT_EQ((*with_json)->doses[1].threads, 4u);
  EXPECT_EQ((*with_json)->detected_from_threads, 4u);
  // A member of the wrong type makes verdict.json unreadable as a whole (it is checked once,
  // where it is read): the margins go back to their defaults and there are no doses, and the
  // table from verdict.csv still shows.
  std::ofstream(root / "study" / "verdict.json") << R"({
    "settings": {"p50_margin": 0.02, "tail_margin": "x"},
    "control_doses": [{"condition": "t4", "threads": 4, "verdict": "intrusive"}],
    "conditions": []})";
  auto malformed = study_verdict(root, s);
  ASSERT_TRUE(malformed.ok());
  ASSERT_TRUE(*malformed);
  EXPECT_DOUBLE_EQ((*malformed)->p50_margin, 0.05);
  EXPECT_TRUE((*malformed)->doses.empty());
  EXPECT_EQ((*malformed)->rows.size(), 1u);
  // Opened at the study's condition, the study's verdict above it is not looked at.
  auto below = study_verdict(root / "study" / "managed", s);
  ASSERT_TRUE(below.ok());
  EXPECT_FALSE(*below);
  // An unreadable verdict.csv is an error naming it.
  std::ofstream(root / "study" / "verdict.csv") << "condition,what\nx,y\n";
  auto broken = study_verdict(root, s);
  ASSERT_FALSE(broken.ok());
  EXPECT_NE(broken.error().message.find("verdict.csv"), std::string::npos);
  fs::remove_all(root);
}

}  // namespace
}  // namespace gpuoverlap::viewer

namespace gpuoverlap::viewer {
namespace {

// The scenario list of `run --all` as a tree: a study's rounds under their condition, a
// matrix's cells under the matrix, presets run alone at the top, in run order.
TEST(ScenarioTree, GroupsStudiesAndMatricesByTheirFolders) {
  const std::vector<std::string> names = {"default",
                                          "study/baseline/round-1",
                                          "study/managed/round-1",
                                          "study/baseline/round-2",
                                          "matrix/a-high",
                                          "matrix/a-normal",
                                          "no-barriers"};
  const std::vector<ScenarioTreeNode> tree = scenario_tree(names);
  ASSERT_EQ(tree.size(), 4u);
  EXPECT_EQ(tree[0].label, "default");
  EXPECT_EQ(tree[0].scenario, 0u);
  EXPECT_TRUE(tree[0].children.empty());
  const ScenarioTreeNode& study = tree[1];
  EXPECT_EQ(study.label, "study");
  EXPECT_FALSE(study.scenario.has_value());
  EXPECT_EQ(study.leaves(), 3u);
  ASSERT_EQ(study.children.size(), 2u);
  EXPECT_EQ(study.children[0].label, "baseline");
  ASSERT_EQ(study.children[0].children.size(), 2u);
  EXPECT_EQ(study.children[0].children[1].label, "round-2");
  EXPECT_EQ(study.children[0].children[1].scenario, 3u);
  EXPECT_EQ(study.children[1].children[0].scenario, 2u);
  EXPECT_TRUE(study.contains(3));
  EXPECT_FALSE(study.contains(0));
  EXPECT_EQ(tree[2].label, "matrix");
  EXPECT_EQ(tree[2].leaves(), 2u);
  EXPECT_EQ(tree[3].scenario, 6u);
  std::size_t leaves = 0;
  for (const ScenarioTreeNode& n : tree) leaves += n.leaves();
  EXPECT_EQ(leaves, names.size());
}

}  // namespace
}  // namespace gpuoverlap::viewer
