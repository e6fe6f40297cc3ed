// The engine's ScenarioExecutor, the same for every backend: a frame scenario through the
// frame loop, a preemption scenario through the preemption loop in this process or with its
// load in a second gpuoverlap process (--load-process), and the load process's own side.
// What it needs of a backend, per physical device, is DeviceBackend: open one scenario's
// device objects, the ping-pong probe, and the device and validation facts of a run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/executor.h"
#include "engine/gpu_api.h"
#include "engine/scenario_backend.h"

namespace gpuoverlap {

// The API's validation counts when a run began, so that its meta reports only its own.
struct ValidationMark {
  std::uint32_t errors = 0, hazards = 0;
};

// Whether a scenario may run on an API device that an earlier scenario created with the same
// queues, priorities and features and left idle. Creating a device is most of what opening a
// scenario costs (vkCreateDevice, about 0.1 s on an H200); a backend that keeps no idle
// devices creates one either way.
enum class DeviceReuse {
  fresh,    // a device of its own, with no idle one left open beside it
  idle_ok,  // an idle one where there is one
};

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;
  // One scenario's device objects: its own device, or with DeviceReuse::idle_ok an idle one
  // created with the same queues, priorities and features (a queue's global priority is fixed
  // when its device is created). An Error says why not (e.g. a refused priority).
  // Contract: the scenario's frame plan is attached and free of errors (the executor checks);
  // the backend records that plan and computes none.
  virtual Result<std::unique_ptr<ScenarioBackend>> open_scenario(const Scenario& scenario,
                                                                 const RunSettings& settings,
                                                                 DeviceReuse reuse) = 0;
  virtual Result<PingPongResult> ping_pong(std::uint32_t rounds, StampMemory memory,
                                           RoundTripPath path, std::uint32_t timeout_ms) = 0;
  // This device's index among the API's devices (the load process opens the same one).
  virtual std::size_t device_index() const = 0;
  virtual ValidationMark validation_mark() const = 0;
  // Adds meta.json's "device" and "validation" (counted since `since`) to a run's timeline.
  virtual void describe_run(ScenarioTimeline& timeline, const ValidationMark& since) const = 0;
  // A device was abandoned outside a scenario's loops (a failed setup or probe that may have
  // left work on the GPU).
  virtual bool abandoned_device() const = 0;
};

class DeviceExecutor final : public ScenarioExecutor {
 public:
  // `api`: the API `device` is a device of; a load process (--load-process) opens the same.
  DeviceExecutor(std::unique_ptr<DeviceBackend> device, GpuApiKind api)
      : device_(std::move(device)), api_(api) {}

  Result<ScenarioTimeline> run(const Scenario& scenario, const RunSettings& settings,
                               const ProgressCallback& progress) override;
  Result<PingPongResult> ping_pong(std::uint32_t rounds, StampMemory memory, RoundTripPath path,
                                   std::uint32_t timeout_ms) override {
    return device_->ping_pong(rounds, memory, path, timeout_ms);
  }
  Result<ScenarioTimeline> run_load_process(const Scenario& load_only, const RunSettings& settings,
                                            preemption::ParentLink& parent) override;
  bool abandoned_device() const override {
    return abandoned_device_ || device_->abandoned_device();
  }

 private:
  // A preemption scenario: in this process, or with the load in a child (--load-process).
  Result<ScenarioTimeline> run_preemption(const Scenario& scenario, const RunSettings& settings,
                                          const ProgressCallback& progress);
  // Notes a scenario whose GPU work may still run: its backend then frees nothing.
  void settle(ScenarioBackend& backend, bool gpu_may_be_busy);
  struct Kept;
  // The device for a frame scenario: a kept one that `scenario` may share (see Kept), its
  // background replaced; otherwise a new one, kept while it may serve the same study.
  Result<Kept*> backend_for(const Scenario& scenario, const RunSettings& settings);
  // Before a run on a reused device: the foreground alone (no background work, unmeasured)
  // for settings.washout_ms, in chunks of kWashoutChunkFrames frames; Kept::washout says how
  // it went. An Error: a washout frame failed (the device is not trusted after it).
  Status washout(Kept& device, const Scenario& scenario, const RunSettings& settings);
  static constexpr std::uint32_t kWashoutChunkFrames = 25;

  std::unique_ptr<DeviceBackend> device_;
  GpuApiKind api_;
  bool abandoned_device_ = false;

  // With RunSettings::study_shares_device (--share-device), the conditions and rounds of a
  // study share one device: opened for the first of them, kept open between runs, and given
  // each run's background work (replace_background), after a washout. It takes whatever
  // state a device opening lands in out of the comparison between conditions; on the H100
  // that did not narrow the spread of the per-round CPU submission time, which comes from
  // shorter-lived host state (docs/results/2026-11-24-h100-device-sharing). Kept only for the next
  // scenario of the same study with the same frame plan (copies of one validated scenario share
  // it), the same run settings (frame counts aside) and the same variant binding (the shader clock
  // depends on it); closed after a run that failed, since its device may be in any state. A study
  // whose conditions differ in binding keeps one device for each; the next study or scenario closes
  // them.
  struct Kept {
    std::string key;                     // what a scenario must match (kept_key)
    std::string opened_for;              // the scenario it was opened for
    std::uint32_t runs = 0;              // runs on it so far
    nlohmann::json washout;              // before the current run (null: none)
    std::unique_ptr<Scenario> scenario;  // the backend refers to these two
    std::unique_ptr<RunSettings> settings;
    std::unique_ptr<ScenarioBackend> backend;  // last: destroyed first
  };
  std::vector<std::unique_ptr<Kept>> kept_;

  // Each load's calibrated sizes on this device, by calibration_key, with the scenario that
  // calibrated it: the cells of a preemption matrix differ in the urgent job's priority, not
  // in what the load costs alone, so the load is sized once per command (in one process;
  // a load process calibrates its own).
  struct Calibrated {
    std::string scenario;
    std::vector<preemption::LoadSize> sizes;
  };
  std::map<std::string, Calibrated> calibrated_;
};

}  // namespace gpuoverlap
