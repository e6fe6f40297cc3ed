// The engine's executor (engine/device_executor.h) on a fake device: what reaches the caller
// when a scenario's device cannot be opened (a refused priority), when a frame leaves work on
// the GPU (the device is abandoned, its backend told to free nothing), and what every run's
// meta gets from the device.
#include "engine/device_executor.h"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>

#include "fake_backend.h"
#include "scenarios/frame_plan.h"
#include "scenarios/scenario.h"

namespace gpuoverlap {
namespace {

using fakes::FakeBackend;
using fakes::FakeFrame;

class FakeDevice final : public DeviceBackend {
 public:
  std::function<void(FakeBackend&)> script;  // applied to each scenario's backend
  std::optional<Error> refuse;               // open_scenario fails with this
  FakeBackend* last = nullptr;               // the last backend opened (owned by the run)
  bool last_marked_busy = false;
  bool last_discarded = false;
  int opened = 0, described = 0;

  std::vector<DeviceReuse> reuse_asked;  // per open_scenario call
  Result<std::unique_ptr<ScenarioBackend>> open_scenario(const Scenario& scenario,
                                                         const RunSettings&,
                                                         DeviceReuse reuse) override {
    reuse_asked.push_back(reuse);
    if (refuse) return *refuse;
    ++opened;
    auto backend = std::make_unique<Observed>(scenario.workloads.size(), *this);
    if (script) script(*backend);
    last = backend.get();
    return std::unique_ptr<ScenarioBackend>(std::move(backend));
  }
  Result<PingPongResult> ping_pong(std::uint32_t, StampMemory, RoundTripPath,
                                   std::uint32_t) override {
    return make_error("no probe on the fake");
  }
  std::size_t device_index() const override { return 0; }
  ValidationMark validation_mark() const override { return {}; }
  void describe_run(ScenarioTimeline& timeline, const ValidationMark&) const override {
    timeline.meta["device"] = {{"name", "fake device"}};
    ++const_cast<FakeDevice*>(this)->described;
  }
  bool abandoned_device() const override { return false; }

 private:
  // Remembers, when destroyed, whether it was told the GPU may still be busy.
  struct Observed final : FakeBackend {
    Observed(std::size_t workloads, FakeDevice& device) : FakeBackend(workloads), device_(device) {}
    ~Observed() override {
      device_.last_marked_busy = marked_busy;
      device_.last_discarded = discarded;
    }
    FakeDevice& device_;
  };
};

Scenario executor_two_workloads() {
  Scenario s;
  s.name = "fake";
  s.queues.push_back({"direct", QueueType::direct, QueuePriority::normal});
  s.workloads.resize(2);
  attach_frame_plan(s);
  return s;
}

RunSettings short_run() {
  RunSettings r;
  r.warmup_frames = 1;
  r.frames = 3;
  r.frame_timeout_ms = 60'000;
  r.washout_ms = 0;              // the washout's own test turns it on
  r.study_shares_device = true;  // --share-device (outside a study it changes nothing)
  return r;
}

TEST(DeviceExecutor, ARefusedDeviceIsAnErrorAndNothingIsMeasured) {
  auto device = std::make_unique<FakeDevice>();
  FakeDevice& fake = *device;
  fake.refuse =
      Error{"queue 'compute': HIGH priority refused", -1000174001, "VK_ERROR_NOT_PERMITTED_KHR"};
  DeviceExecutor executor(std::move(device), GpuApiKind::vulkan);
  auto timeline = executor.run(executor_two_workloads(), short_run(), {});
  ASSERT_FALSE(timeline);
  EXPECT_EQ(timeline.error().api_code_name, "VK_ERROR_NOT_PERMITTED_KHR");
  EXPECT_EQ(fake.described, 0);
  EXPECT_FALSE(executor.abandoned_device());
}

// The engine runs the plan attached at validation; a scenario without one, or reshaped after
// it, would record a plan that is not its own, so nothing is opened.
TEST(DeviceExecutor, AScenarioWithoutItsOwnPlanOpensNoDevice) {
  auto device = std::make_unique<FakeDevice>();
  FakeDevice& fake = *device;
  DeviceExecutor executor(std::move(device), GpuApiKind::vulkan);
  Scenario unplanned = executor_two_workloads();
  unplanned.plan.reset();
  auto refused = executor.run(unplanned, short_run(), {});
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("not validated"), std::string::npos);

  Scenario reshaped = executor_two_workloads();
  reshaped.workloads.push_back(reshaped.workloads.front());
  auto stale = executor.run(reshaped, short_run(), {});
  ASSERT_FALSE(stale);
  EXPECT_NE(stale.error().message.find("changed after validation"), std::string::npos);
  EXPECT_EQ(fake.opened, 0);
}

TEST(DeviceExecutor, AGoodRunIsDescribedAndLeavesNothingBehind) {
  auto device = std::make_unique<FakeDevice>();
  FakeDevice& fake = *device;
  DeviceExecutor executor(std::move(device), GpuApiKind::vulkan);
  auto timeline = executor.run(executor_two_workloads(), short_run(), {});
  ASSERT_TRUE(timeline);
  EXPECT_FALSE(timeline->failure);
  EXPECT_EQ(timeline->records.size(), 6u);
  EXPECT_EQ(timeline->meta["device"]["name"], "fake device");
  // Where the time went, every phase a duration.
  for (const char* phase :
       {"open_device", "before_measured", "measured", "after_frames", "close_device"}) {
    ASSERT_TRUE(timeline->meta["phases_ms"][phase].is_number()) << phase;
    EXPECT_GE(timeline->meta["phases_ms"][phase].get<double>(), 0.0) << phase;
  }
  EXPECT_EQ(fake.described, 1);
  EXPECT_FALSE(fake.last_marked_busy);
  EXPECT_FALSE(executor.abandoned_device());
}

TEST(DeviceExecutor, AStuckFrameAbandonsTheDeviceAndTellsItsBackendToFreeNothing) {
  auto device = std::make_unique<FakeDevice>();
  FakeDevice& fake = *device;
  fake.script = [](FakeBackend& b) {
    b.script[2] = FakeFrame{.stamps_at_release = false,
                            .first_wait = GpuStatus::timeout,
                            .grace_wait = GpuStatus::timeout};
  };
  DeviceExecutor executor(std::move(device), GpuApiKind::vulkan);
  auto timeline = executor.run(executor_two_workloads(), short_run(), {});
  ASSERT_TRUE(timeline);  // measured up to the stuck frame: a result, not an Error
  ASSERT_TRUE(timeline->failure);
  EXPECT_TRUE(fake.last_marked_busy);
  EXPECT_TRUE(executor.abandoned_device());
  EXPECT_EQ(fake.described, 1);  // the facts of a failed run are still written
}

// Conditions of one study: copies of one validated foreground (sharing its plan), each with
// its own background.
Scenario study_condition(const Scenario& foreground, const std::string& condition,
                         bool with_background) {
  Scenario s = foreground;
  s.study = "study";
  s.condition = condition;
  s.name = "study/" + condition;
  if (with_background) s.background = background::BackgroundSpec{};
  return s;
}

TEST(DeviceExecutor, AStudysConditionsShareOneDeviceWhoseFramesCountOnAcrossRuns) {
  auto device = std::make_unique<FakeDevice>();
  FakeDevice& fake = *device;
  fake.script = [](FakeBackend& b) {
    b.device_facts.open_parts_ms = {{"device", 12.5}, {"pipelines", 3.0}};
  };
  DeviceExecutor executor(std::move(device), GpuApiKind::vulkan);
  const Scenario foreground = executor_two_workloads();
  const Scenario baseline = study_condition(foreground, "baseline", false);
  const Scenario managed = study_condition(foreground, "managed", true);
  std::vector<std::int64_t> runs;
  for (const Scenario* s : {&baseline, &managed, &managed, &baseline}) {
    auto timeline = executor.run(*s, short_run(), {});
    ASSERT_TRUE(timeline);
    ASSERT_FALSE(timeline->failure) << timeline->failure->message;
    EXPECT_EQ(timeline->records.size(), 6u);
    for (const WorkloadFrameRecord& r : timeline->records) EXPECT_EQ(r.status, RecordStatus::ok);
    const nlohmann::json& opening = timeline->meta["device_opening"];
    EXPECT_EQ(opening["opened_for"], "study/baseline");
    EXPECT_TRUE(opening["kept_open"].get<bool>());
    runs.push_back(opening["run"].get<std::int64_t>());
    // The opening's parts belong to the run that opened the device.
    if (runs.back() == 1)
      EXPECT_EQ(opening["parts_ms"], nlohmann::json({{"device", 12.5}, {"pipelines", 3.0}}));
    else
      EXPECT_TRUE(opening["parts_ms"].is_null()) << opening.dump();
  }
  EXPECT_EQ(runs, (std::vector<std::int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(fake.opened, 1);
  ASSERT_NE(fake.last, nullptr);
  EXPECT_EQ(fake.last->backgrounds_replaced, 3);
  // Four runs of 1 warm-up + 3 frames, numbered on: a reused backend's stamps and semaphores
  // still hold the last run's numbers.
  std::vector<std::uint32_t> expected(16);
  for (std::uint32_t i = 0; i < 16; ++i) expected[i] = i + 1;
  EXPECT_EQ(fake.last->submitted, expected);
}

// Before each run on a reused device, the foreground alone runs unmeasured: in chunks of 25
// frames, for at least washout_ms (1 ms: one chunk), with no background session.
TEST(DeviceExecutor, AReusedDeviceRunsTheForegroundAloneBeforeTheNextCondition) {
  auto device = std::make_unique<FakeDevice>();
  FakeDevice& fake = *device;
  DeviceExecutor executor(std::move(device), GpuApiKind::vulkan);
  const Scenario foreground = executor_two_workloads();
  RunSettings settings = short_run();
  settings.washout_ms = 1;
  auto first = executor.run(study_condition(foreground, "baseline", false), settings, {});
  ASSERT_TRUE(first && !first->failure);
  EXPECT_TRUE(first->meta["device_opening"]["washout"].is_null()) << "a new device needs none";
  auto second = executor.run(study_condition(foreground, "managed", true), settings, {});
  ASSERT_TRUE(second && !second->failure);
  const nlohmann::json& washout = second->meta["device_opening"]["washout"];
  ASSERT_TRUE(washout.is_object()) << second->meta.dump();
  // Whole chunks, at least one (more only if one chunk took under 1 ms).
  const std::uint32_t washout_frames = washout["frames"].get<std::uint32_t>();
  EXPECT_GE(washout_frames, 25u);
  EXPECT_EQ(washout_frames % 25, 0u);
  EXPECT_GT(washout["last_frames_cpu_frame_us"].get<double>(), 0.0);
  // 4 frames, the washout's, then the run's 4 frames; the background replaced twice (none for
  // the washout, then the condition's).
  std::vector<std::uint32_t> expected(8 + washout_frames);
  for (std::uint32_t i = 0; i < expected.size(); ++i) expected[i] = i + 1;
  EXPECT_EQ(fake.last->submitted, expected);
  EXPECT_EQ(fake.last->backgrounds_replaced, 2);
  EXPECT_EQ(second->records.size(), 6u) << "washout frames are not measured";
}

TEST(DeviceExecutor, ADeviceIsSharedOnlyByTheSameStudyPlanSettingsAndBinding) {
  auto device = std::make_unique<FakeDevice>();
  FakeDevice& fake = *device;
  DeviceExecutor executor(std::move(device), GpuApiKind::vulkan);
  const Scenario foreground = executor_two_workloads();
  const Scenario baseline = study_condition(foreground, "baseline", false);
  auto run = [&](const Scenario& s, const RunSettings& settings) {
    auto timeline = executor.run(s, settings, {});
    EXPECT_TRUE(timeline && !timeline->failure);
    return timeline ? timeline->meta["device_opening"]["run"].get<int>() : -1;
  };
  EXPECT_EQ(run(baseline, short_run()), 1);
  RunSettings more_frames = short_run();
  more_frames.frames = 9;  // frame counts are the loop's: the device is the same
  EXPECT_EQ(run(baseline, more_frames), 2);
  EXPECT_EQ(fake.opened, 1);

  RunSettings no_timestamps = short_run();
  no_timestamps.timestamp_queries = false;
  EXPECT_EQ(run(baseline, no_timestamps), 1);
  EXPECT_EQ(fake.opened, 2);

  Scenario binds = study_condition(foreground, "bound", true);
  binds.background->bind_committed = true;
  EXPECT_EQ(run(binds, no_timestamps), 1);  // the shader clock depends on binding
  EXPECT_EQ(fake.opened, 3);
  // Each of the study's devices stays open for the runs that match it.
  EXPECT_EQ(run(baseline, short_run()), 3);
  EXPECT_EQ(run(binds, no_timestamps), 2);
  EXPECT_EQ(fake.opened, 3);

  // The same workloads validated again are another plan, and another study another device.
  EXPECT_EQ(run(study_condition(executor_two_workloads(), "baseline", false), no_timestamps), 1);
  Scenario other_study = study_condition(foreground, "baseline", false);
  other_study.study = "other";
  EXPECT_EQ(run(other_study, no_timestamps), 1);
  EXPECT_EQ(fake.opened, 5);

  // Without --share-device a study's scenarios open their own too.
  RunSettings per_scenario = no_timestamps;
  per_scenario.study_shares_device = false;
  EXPECT_EQ(run(other_study, per_scenario), 1);
  EXPECT_EQ(run(other_study, per_scenario), 1);
  EXPECT_EQ(fake.opened, 7);

  // Outside a study every scenario has a device of its own, as before.
  EXPECT_EQ(run(foreground, short_run()), 1);
  EXPECT_EQ(run(foreground, short_run()), 1);
  EXPECT_EQ(fake.opened, 9);
}

// Only a frame scenario outside a study may run on an idle device an earlier one created; a
// study's scenarios (shared device or not), a preemption scenario and every scenario with
// --device-per-scenario ask for their own.
TEST(DeviceExecutor, OnlyAScenarioOutsideAStudyMayRunOnAnIdleDevice) {
  auto device = std::make_unique<FakeDevice>();
  FakeDevice& fake = *device;
  DeviceExecutor executor(std::move(device), GpuApiKind::vulkan);
  const Scenario foreground = executor_two_workloads();
  RunSettings shared = short_run();
  RunSettings per_study_scenario = short_run();
  per_study_scenario.study_shares_device = false;
  RunSettings per_scenario = short_run();
  per_scenario.reuse_devices = false;
  ASSERT_TRUE(executor.run(foreground, shared, {}));
  ASSERT_TRUE(executor.run(study_condition(foreground, "baseline", false), shared, {}));
  ASSERT_TRUE(executor.run(study_condition(foreground, "managed", true), per_study_scenario, {}));
  ASSERT_TRUE(executor.run(foreground, per_scenario, {}));
  preemption::PreemptionSpec spec;
  spec.target_ms = 2;
  spec.period_ms = 5;
  spec.duration_ms = 20;
  ASSERT_TRUE(
      executor.run(preemption::make_scenario(spec, preemption::Role::both, "p"), short_run(), {}));
  EXPECT_EQ(fake.reuse_asked,
            (std::vector<DeviceReuse>{DeviceReuse::idle_ok, DeviceReuse::fresh, DeviceReuse::fresh,
                                      DeviceReuse::fresh, DeviceReuse::fresh}));
}

// Where the backend says where its API device came from, meta.json's device_opening does.
TEST(DeviceExecutor, TheApiDevicesOriginIsInTheMeta) {
  auto device = std::make_unique<FakeDevice>();
  FakeDevice& fake = *device;
  fake.script = [](FakeBackend& b) {
    b.device_facts.api_device_created_for = "earlier";
    b.device_facts.api_device_use = 3;
  };
  DeviceExecutor executor(std::move(device), GpuApiKind::vulkan);
  auto timeline = executor.run(executor_two_workloads(), short_run(), {});
  ASSERT_TRUE(timeline && !timeline->failure);
  EXPECT_EQ(timeline->meta["device_opening"]["api_device"],
            nlohmann::json({{"created_for", "earlier"}, {"use", 3}}));
  fake.script = nullptr;
  auto silent = executor.run(executor_two_workloads(), short_run(), {});
  ASSERT_TRUE(silent && !silent->failure);
  EXPECT_TRUE(silent->meta["device_opening"]["api_device"].is_null());
}

// A run that failed leaves its device to no later scenario; a run that abandoned a device with
// work on the GPU leaves no idle device trusted, so every later scenario creates its own.
TEST(DeviceExecutor, AFailedRunsDeviceIsDiscardedAndAfterAnAbandonedOneNothingIsReused) {
  auto device = std::make_unique<FakeDevice>();
  FakeDevice& fake = *device;
  DeviceExecutor executor(std::move(device), GpuApiKind::vulkan);
  auto good = executor.run(executor_two_workloads(), short_run(), {});
  ASSERT_TRUE(good && !good->failure);
  EXPECT_FALSE(fake.last_discarded);
  RunSettings interrupted = short_run();
  interrupted.should_stop = [] { return true; };
  auto stopped = executor.run(executor_two_workloads(), interrupted, {});
  ASSERT_TRUE(stopped && stopped->failure);
  EXPECT_TRUE(fake.last_discarded);
  EXPECT_FALSE(executor.abandoned_device());

  fake.script = [](FakeBackend& b) {
    b.script[2] = FakeFrame{.stamps_at_release = false,
                            .first_wait = GpuStatus::timeout,
                            .grace_wait = GpuStatus::timeout};
  };
  auto stuck = executor.run(executor_two_workloads(), short_run(), {});
  ASSERT_TRUE(stuck && stuck->failure);
  ASSERT_TRUE(executor.abandoned_device());
  fake.script = nullptr;
  auto after = executor.run(executor_two_workloads(), short_run(), {});
  ASSERT_TRUE(after);
  EXPECT_EQ(fake.reuse_asked, (std::vector<DeviceReuse>{DeviceReuse::idle_ok, DeviceReuse::idle_ok,
                                                        DeviceReuse::idle_ok, DeviceReuse::fresh}));
}

TEST(DeviceExecutor, AStudyRunThatFailedClosesItsDevice) {
  auto device = std::make_unique<FakeDevice>();
  FakeDevice& fake = *device;
  DeviceExecutor executor(std::move(device), GpuApiKind::vulkan);
  const Scenario baseline = study_condition(executor_two_workloads(), "baseline", false);
  RunSettings interrupted = short_run();
  interrupted.should_stop = [] { return true; };
  auto stopped = executor.run(baseline, interrupted, {});
  ASSERT_TRUE(stopped);
  ASSERT_TRUE(stopped->failure);
  EXPECT_FALSE(stopped->meta["device_opening"]["kept_open"].get<bool>());
  auto next = executor.run(baseline, short_run(), {});
  ASSERT_TRUE(next && !next->failure);
  EXPECT_EQ(fake.opened, 2);
  EXPECT_EQ(next->meta["device_opening"]["run"], 1);
  EXPECT_EQ(fake.last->submitted.front(), 1u);  // a new device counts from 1
}

TEST(DeviceExecutor, APreemptionScenarioInOneProcessRunsThePreemptionLoop) {
  auto device = std::make_unique<FakeDevice>();
  FakeDevice& fake = *device;
  DeviceExecutor executor(std::move(device), GpuApiKind::vulkan);
  preemption::PreemptionSpec spec;
  spec.target_ms = 2;
  spec.period_ms = 5;
  spec.duration_ms = 20;
  const Scenario scenario = preemption::make_scenario(spec, preemption::Role::both, "p");
  auto timeline = executor.run(scenario, short_run(), {});
  ASSERT_TRUE(timeline);
  EXPECT_FALSE(timeline->failure);
  ASSERT_TRUE(timeline->preemption);
  EXPECT_EQ(timeline->preemption->process, preemption::ProcessMode::same);
  EXPECT_FALSE(timeline->frames.empty());
  EXPECT_EQ(fake.opened, 1);
  for (const char* phase : {"open_device", "loop", "close_device"})
    EXPECT_TRUE(timeline->meta["phases_ms"][phase].is_number()) << phase;
}

// A matrix calibrates each load once: a cell at another priority runs at the sizes the first
// cell of that load found, and says whose they are; another target calibrates anew.
TEST(DeviceExecutor, AMatrixCalibratesEachLoadOnceAndNamesWhoseSizesACellRan) {
  DeviceExecutor executor(std::make_unique<FakeDevice>(), GpuApiKind::vulkan);
  preemption::PreemptionSpec spec;
  spec.target_ms = 2;
  spec.period_ms = 5;
  spec.duration_ms = 20;
  auto run = [&](const preemption::PreemptionSpec& cell, const std::string& name) {
    auto timeline = executor.run(preemption::make_scenario(cell, preemption::Role::both, name),
                                 short_run(), {});
    EXPECT_TRUE(timeline && !timeline->failure && timeline->preemption) << name;
    return timeline ? *timeline->preemption : preemption::PreemptionRunInfo{};
  };
  const preemption::PreemptionRunInfo first = run(spec, "m/big-dispatch-normal");
  EXPECT_TRUE(first.calibrated);
  EXPECT_TRUE(first.sizes_from.empty());
  EXPECT_FALSE(first.calibration.empty());  // its probes

  spec.priority = QueuePriority::high;
  const preemption::PreemptionRunInfo second = run(spec, "m/big-dispatch-high");
  EXPECT_TRUE(second.calibrated);
  EXPECT_EQ(second.sizes_from, "m/big-dispatch-normal");
  EXPECT_TRUE(second.calibration.empty());  // no probe ran
  EXPECT_EQ(second.load_sizes, first.load_sizes);
  EXPECT_EQ(preemption::to_json(second).value("sizes_from", ""), "m/big-dispatch-normal");

  spec.target_ms = 3;  // another load: calibrated on its own
  const preemption::PreemptionRunInfo third = run(spec, "other");
  EXPECT_TRUE(third.sizes_from.empty());
  EXPECT_FALSE(third.calibration.empty());
}

}  // namespace
}  // namespace gpuoverlap

namespace gpuoverlap {
namespace {

TEST(RunSettingsJson, RoundTripsEverySettingTheLoadProcessNeeds) {
  RunSettings settings;
  settings.frames = 7;
  settings.warmup_frames = 0;
  settings.frame_timeout_ms = 1234;
  settings.priority_fallback = true;
  settings.timestamp_queries = false;
  settings.stamping = false;
  settings.stamp_memory = StampMemory::cached;
  settings.shader_clock = false;
  settings.study_shares_device = true;
  settings.washout_ms = 750;
  settings.measure_limit_ms = 1500;
  settings.poller = {3, PollerPriority::realtime};
  auto back = run_settings_from_json(nlohmann::json::parse(to_json(settings).dump()));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(to_json(*back), to_json(settings));
  EXPECT_EQ(back->stamp_memory, StampMemory::cached);
  EXPECT_EQ(back->frame_timeout_ms, 1234u);
  EXPECT_EQ(back->poller.cpu, 3);
  EXPECT_EQ(back->poller.priority, PollerPriority::realtime);
}

TEST(RunSettingsJson, RefusesMissingWrongTypedAndOutOfRangeValues) {
  const nlohmann::json good = to_json(RunSettings{});
  auto refused = [&](const char* key, nlohmann::json value) {
    nlohmann::json j = good;
    if (value.is_null())
      j.erase(key);
    else
      j[key] = value;
    auto result = run_settings_from_json(j);
    if (result) return std::string("accepted");
    return result.error().message;
  };
  EXPECT_NE(refused("frame_timeout_ms", 0).find("'frame_timeout_ms' must be a whole number"),
            std::string::npos);
  EXPECT_NE(refused("frame_timeout_ms", kMaxFrameTimeoutMs + 1).find("frame_timeout_ms"),
            std::string::npos);
  EXPECT_NE(refused("frames", -1).find("'frames'"), std::string::npos);
  EXPECT_NE(refused("frames", 2.5).find("'frames'"), std::string::npos);
  EXPECT_NE(refused("stamping", nullptr).find("'stamping' must be true or false"),
            std::string::npos);
  EXPECT_NE(refused("stamp_memory", "device").find("'stamp_memory'"), std::string::npos);
  EXPECT_NE(refused("poller_cpu", -1).find("'poller_cpu'"), std::string::npos);
  EXPECT_NE(refused("poller_priority", "idle").find("'poller_priority'"), std::string::npos);
  EXPECT_EQ(refused("poller_cpu", 2), "accepted");
  EXPECT_FALSE(run_settings_from_json(nlohmann::json::array()));
}

}  // namespace
}  // namespace gpuoverlap
