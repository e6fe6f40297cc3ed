// A run's frames as they are measured, handed from the run's thread to the viewer's window
// (`run --live`): RunSettings::on_frame calls add_frame, the window takes snapshots. The
// records become the same RecordRow the results readers make, so the window draws a live
// run exactly as it draws a results folder.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <span>

#include "analysis/results.h"
#include "scenarios/scenario.h"
#include "timeline/records.h"

namespace gpuoverlap::viewer {

class LiveFeed {
 public:
  // `device`: meta.json's "device" object of the device the run uses (the window's top line).
  explicit LiveFeed(nlohmann::json device = nlohmann::json::object());

  // The run's thread, once its device is chosen: meta.json's "device" (api, name).
  void set_device(const nlohmann::json& device);
  // The run's thread, once a scenario's device is open (RunSettings::on_start): its device
  // facts as meta.json has them (the queues with their granted priorities).
  void begin_scenario(const Scenario& scenario, const nlohmann::json& device_facts);
  // The run's thread, after each measured frame (RunSettings::on_frame).
  void add_frame(const Scenario& scenario, const FrameRecord& frame,
                 std::span<const WorkloadFrameRecord> records);
  // The run's thread, once, when the run has ended (its exit status).
  void finish(int exit_status);

  // The window's thread: the scenarios so far, when anything was added since `version` (which
  // is then updated); nullopt otherwise.
  std::optional<LoadedRun> snapshot(std::uint64_t& version) const;
  bool finished() const;
  std::uint64_t frames() const;  // measured frames received, over all scenarios

 private:
  // The scenario's entry in run_, made on first sight; under mutex_.
  LoadedScenario& entry(const Scenario& scenario);

  mutable std::mutex mutex_;
  nlohmann::json device_;
  LoadedRun run_;
  std::uint64_t version_ = 0, frames_ = 0;
  bool finished_ = false;
};

}  // namespace gpuoverlap::viewer
