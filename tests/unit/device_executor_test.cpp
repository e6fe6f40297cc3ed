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
  int opened = 0, described = 0;

  Result<std::unique_ptr<ScenarioBackend>> open_scenario(const Scenario& scenario,
                                                         const RunSettings&) override {
    if (refuse) return *refuse;
    ++opened;
    auto backend = std::make_unique<Observed>(scenario.workloads.size(), *this);
    if (script) script(*backend);
    last = backend.get();
    return std::unique_ptr<ScenarioBackend>(std::move(backend));
  }
  Result<PingPongResult> ping_pong(std::uint32_t, StampMemory, std::uint32_t) override {
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
    ~Observed() override { device_.last_marked_busy = marked_busy; }
    FakeDevice& device_;
  };
};

Scenario two_workloads() {
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
  return r;
}

TEST(DeviceExecutor, ARefusedDeviceIsAnErrorAndNothingIsMeasured) {
  auto device = std::make_unique<FakeDevice>();
  FakeDevice& fake = *device;
  fake.refuse =
      Error{"queue 'compute': HIGH priority refused", -1000174001, "VK_ERROR_NOT_PERMITTED_KHR"};
  DeviceExecutor executor(std::move(device));
  auto timeline = executor.run(two_workloads(), short_run(), {});
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
  DeviceExecutor executor(std::move(device));
  Scenario unplanned = two_workloads();
  unplanned.plan.reset();
  auto refused = executor.run(unplanned, short_run(), {});
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("not validated"), std::string::npos);

  Scenario reshaped = two_workloads();
  reshaped.workloads.push_back(reshaped.workloads.front());
  auto stale = executor.run(reshaped, short_run(), {});
  ASSERT_FALSE(stale);
  EXPECT_NE(stale.error().message.find("changed after validation"), std::string::npos);
  EXPECT_EQ(fake.opened, 0);
}

TEST(DeviceExecutor, AGoodRunIsDescribedAndLeavesNothingBehind) {
  auto device = std::make_unique<FakeDevice>();
  FakeDevice& fake = *device;
  DeviceExecutor executor(std::move(device));
  auto timeline = executor.run(two_workloads(), short_run(), {});
  ASSERT_TRUE(timeline);
  EXPECT_FALSE(timeline->failure);
  EXPECT_EQ(timeline->records.size(), 6u);
  EXPECT_EQ(timeline->meta["device"]["name"], "fake device");
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
  DeviceExecutor executor(std::move(device));
  auto timeline = executor.run(two_workloads(), short_run(), {});
  ASSERT_TRUE(timeline);  // measured up to the stuck frame: a result, not an Error
  ASSERT_TRUE(timeline->failure);
  EXPECT_TRUE(fake.last_marked_busy);
  EXPECT_TRUE(executor.abandoned_device());
  EXPECT_EQ(fake.described, 1);  // the facts of a failed run are still written
}

TEST(DeviceExecutor, APreemptionScenarioInOneProcessRunsThePreemptionLoop) {
  auto device = std::make_unique<FakeDevice>();
  FakeDevice& fake = *device;
  DeviceExecutor executor(std::move(device));
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
  auto back = run_settings_from_json(nlohmann::json::parse(to_json(settings).dump()));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(to_json(*back), to_json(settings));
  EXPECT_EQ(back->stamp_memory, StampMemory::cached);
  EXPECT_EQ(back->frame_timeout_ms, 1234u);
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
  EXPECT_FALSE(run_settings_from_json(nlohmann::json::array()));
}

}  // namespace
}  // namespace gpuoverlap
