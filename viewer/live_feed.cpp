#include "viewer/live_feed.h"

#include <algorithm>

#include "timeline/record_row.h"

namespace gpuoverlap::viewer {

LiveFeed::LiveFeed(nlohmann::json device) : device_(std::move(device)) {}

void LiveFeed::set_device(const nlohmann::json& device) {
  std::lock_guard lock(mutex_);
  device_ = device;
  for (LoadedScenario& s : run_.scenarios) {
    s.meta_json["device"] = device;
    s.meta = read_scenario_meta(s.meta_json);
  }
  ++version_;
}

LoadedScenario& LiveFeed::entry(const Scenario& scenario) {
  auto it = std::find_if(run_.scenarios.begin(), run_.scenarios.end(),
                         [&](const LoadedScenario& s) { return s.name == scenario.name; });
  if (it != run_.scenarios.end()) return *it;
  LoadedScenario fresh;
  fresh.name = scenario.name;
  fresh.kind = scenario.preemption ? ScenarioKind::preemption : ScenarioKind::frames;
  fresh.game_frame = scenario.cpu.has_value();
  if (!scenario.study.empty())
    fresh.study =
        StudyMembership{scenario.study, scenario.condition, scenario.study_kind(), scenario.round};
  // Until its device facts come (begin_scenario): the queues as the scenario asks for them.
  nlohmann::json queues = nlohmann::json::array();
  for (const QueueSpec& q : scenario.queues)
    queues.push_back({{"name", q.name},
                      {"type", to_string(q.type)},
                      {"priority_requested", to_string(q.priority)}});
  fresh.meta_json = {{"device", device_}, {"queues", queues}};
  fresh.meta = read_scenario_meta(fresh.meta_json);
  for (const WorkloadSpec& w : scenario.workloads) fresh.workloads.push_back(w.name);
  run_.scenarios.push_back(std::move(fresh));
  return run_.scenarios.back();
}

void LiveFeed::begin_scenario(const Scenario& scenario, const nlohmann::json& device_facts) {
  std::lock_guard lock(mutex_);
  LoadedScenario& s = entry(scenario);
  for (const auto& [key, value] : device_facts.items()) s.meta_json[key] = value;
  s.meta_json["device"] = device_;
  s.meta = read_scenario_meta(s.meta_json);
  ++version_;
}

void LiveFeed::add_frame(const Scenario& scenario, const FrameRecord& frame,
                         std::span<const WorkloadFrameRecord> records) {
  std::lock_guard lock(mutex_);
  LoadedScenario* const it = &entry(scenario);
  it->frames.push_back({.frame = frame.frame,
                        .ok = frame.status == RecordStatus::ok,
                        .stutter = frame.stutter,
                        .frame_interval_us = frame.frame_interval_us,
                        .gpu_span_us = frame.gpu_span_us,
                        .cpu_phase_us = frame.cpu_phase_us,
                        .wake_max_us = frame.wake_max_us,
                        .critical_path_us = frame.critical_path_us});
  // The disturbed bits are judged once the scenario has ended (its windows set the
  // tolerance): a frame shown live has its windows and none yet.
  for (const WorkloadFrameRecord& r : records)
    if (r.workload < scenario.workloads.size()) it->records.push_back(record_row(scenario, r));
  ++frames_;
  ++version_;
}

void LiveFeed::finish(int exit_status) {
  std::lock_guard lock(mutex_);
  finished_ = true;
  run_.run = {{"live", true}, {"exit_status", exit_status}};
  ++version_;
}

std::optional<LoadedRun> LiveFeed::snapshot(std::uint64_t& version) const {
  std::lock_guard lock(mutex_);
  if (version == version_) return std::nullopt;
  version = version_;
  return run_;
}

bool LiveFeed::finished() const {
  std::lock_guard lock(mutex_);
  return finished_;
}

std::uint64_t LiveFeed::frames() const {
  std::lock_guard lock(mutex_);
  return frames_;
}

}  // namespace gpuoverlap::viewer
