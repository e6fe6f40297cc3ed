#include "engine/device_executor.h"

#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "core/clock.h"
#include "engine/frame_loop.h"
#include "engine/preemption_loop.h"
#include "preemption/load_process.h"
#include "scenarios/frame_plan.h"
#include "scenarios/scenario.h"
#include "timeline/statistics.h"

namespace gpuoverlap {
namespace {

// How long the parent waits for the load process to calibrate and start loading: every
// probe has --timeout-ms, so this only catches a child that hangs outside the GPU.
constexpr std::int64_t kLoadProcessReadyNs = 600'000'000'000;

// A backend records the plan attached at validation (Scenario::plan); a scenario that reached
// the engine without one, or with a plan that breaks a rule, is refused before any GPU work.
Status check_planned(const Scenario& scenario) {
  if (!scenario.plan)
    return make_error("scenario '" + scenario.name + "' was not validated (no frame plan)");
  // A plan with rule errors may stop short of every workload: its errors are the reason.
  if (scenario.plan->has_errors())
    return make_error("scenario '" + scenario.name +
                      "' breaks a barrier rule (`gpuoverlap validate` says which)");
  if (scenario.plan->execution_order.size() != scenario.workloads.size())
    return make_error("scenario '" + scenario.name +
                      "' changed after validation: its frame plan is for another shape");
  return ok_status();
}

// What a scenario must share with the kept backend's to run on it (DeviceExecutor::Kept);
// empty: it may not (outside a study, or a preemption scenario).
std::string kept_key(const Scenario& scenario, const RunSettings& settings) {
  if (scenario.study.empty() || scenario.preemption || !scenario.plan ||
      !settings.study_shares_device)
    return {};
  nlohmann::json key = to_json(settings);
  key.erase("frames");  // the loop's, not the device's
  key.erase("warmup_frames");
  key.erase("washout_ms");
  key.erase("measure_limit_ms");
  key["study"] = scenario.study;
  // Copies of one validated scenario share its plan, and a study's conditions are copies of
  // its foreground: the same plan object means the same queues, workloads and barriers.
  key["plan"] = reinterpret_cast<std::uintptr_t>(scenario.plan.get());
  key["binds_variants"] = scenario.background && scenario.background->bind_committed;
  return key.dump();
}

// A study compares its conditions run by run: each creates its own device, as a scenario
// always did before devices were kept, with no idle one open beside it, so what ran before the
// study cannot reach its comparison through a device. A preemption scenario sizes its load
// from the timestamps around it: on lavapipe, a device reused after a frame scenario gave
// timestamps that did not bracket the load's dispatch (0.007 ms for a dispatch the CPU waited
// 33 ms for), so the calibration grew the load past its deadline; it creates its own device
// too. Every other scenario may take an idle one (RunSettings::reuse_devices), unless a
// device was abandoned with work on the GPU (`abandoned`): after that, nothing kept idle is
// trusted.
DeviceReuse reuse_for(const Scenario& scenario, const RunSettings& settings, bool abandoned) {
  return settings.reuse_devices && scenario.study.empty() && !scenario.preemption && !abandoned
             ? DeviceReuse::idle_ok
             : DeviceReuse::fresh;
}

// What a load's calibration depends on: its kind, target and the sizes the file gives. Not the
// urgent job's priority, period or duration, nor the process mode.
std::string calibration_key(const preemption::PreemptionSpec& spec) {
  nlohmann::json key = {{"load", to_string(spec.load)}, {"target_ms", spec.target_ms}};
  if (spec.groups) key["groups"] = *spec.groups;
  if (spec.iterations) key["iterations"] = *spec.iterations;
  if (spec.draws) key["draws"] = *spec.draws;
  return key.dump();
}

// meta.json's phases_ms (the frame loop's own phases beside): opening the device, or finding
// the study's kept one and washing it out, and closing it (0 when it stays open).
void add_open_and_close_ms(nlohmann::json& meta, std::int64_t open_ns, std::int64_t close_ns) {
  meta["phases_ms"]["open_device"] = rounded_ms(open_ns);
  meta["phases_ms"]["close_device"] = rounded_ms(close_ns);
}

// meta.json's device_opening (docs/output-format.md). The backend's opening parts and API
// device belong to the run that opened it (`run` 1), not to later runs on a study's kept one.
nlohmann::json device_opening(const std::string& opened_for, std::uint32_t run, bool kept_open,
                              const nlohmann::json& washout, const ScenarioDeviceFacts& facts) {
  nlohmann::json parts = nullptr, api_device = nullptr;
  if (run == 1 && !facts.open_parts_ms.empty()) {
    parts = nlohmann::json::object();
    for (const auto& [part, ms] : facts.open_parts_ms) parts[part] = ms;
  }
  if (run == 1 && !facts.api_device_created_for.empty())
    api_device = {{"created_for", facts.api_device_created_for}, {"use", facts.api_device_use}};
  return {{"opened_for", opened_for}, {"run", run},        {"kept_open", kept_open},
          {"washout", washout},       {"parts_ms", parts}, {"api_device", api_device}};
}

}  // namespace

Result<DeviceExecutor::Kept*> DeviceExecutor::backend_for(const Scenario& scenario,
                                                          const RunSettings& settings) {
  const std::string key = kept_key(scenario, settings);
  // Devices of another study (or of none) are closed before this scenario opens one.
  std::erase_if(kept_, [&](const std::unique_ptr<Kept>& k) {
    return key.empty() || k->scenario->study != scenario.study;
  });
  for (std::size_t i = 0; i < kept_.size(); ++i) {
    if (kept_[i]->key != key) continue;
    Kept& device = *kept_[i];
    Status ready = washout(device, scenario, settings);
    if (ready) ready = device.backend->replace_background(scenario);
    if (!ready) {
      kept_.erase(kept_.begin() + static_cast<std::ptrdiff_t>(i));
      return ready.error();
    }
    ++device.runs;
    return &device;
  }
  auto kept = std::make_unique<Kept>();
  kept->key = key;
  kept->opened_for = scenario.name;
  kept->runs = 1;
  kept->scenario = std::make_unique<Scenario>(scenario);
  kept->settings = std::make_unique<RunSettings>(settings);
  auto opened =
      device_->open_scenario(*kept->scenario, *kept->settings,
                             reuse_for(*kept->scenario, *kept->settings, abandoned_device()));
  if (!opened) return opened.error();
  kept->backend = std::move(*opened);
  kept_.push_back(std::move(kept));
  return kept_.back().get();
}

Status DeviceExecutor::washout(Kept& device, const Scenario& scenario,
                               const RunSettings& settings) {
  device.washout = nullptr;
  if (settings.washout_ms == 0) return ok_status();
  Scenario alone = scenario;
  alone.background.reset();
  GPUOVERLAP_TRY(device.backend->replace_background(alone));
  RunSettings chunk = settings;
  chunk.warmup_frames = 0;
  chunk.frames = kWashoutChunkFrames;
  std::vector<double> chunk_frame_us;  // each chunk's median cpu_frame_us
  std::uint32_t frames = 0;
  const std::int64_t start_ns = monotonic_raw_ns();
  const std::int64_t until_ns = start_ns + std::int64_t{settings.washout_ms} * 1'000'000;
  do {
    FrameLoopOutcome outcome = run_frames(*device.backend, alone, chunk, {});
    settle(*device.backend, outcome.gpu_may_be_busy);
    if (outcome.timeline.failure)
      return outcome.timeline.failure->with_context("the washout before '" + scenario.name + "': ");
    frames += kWashoutChunkFrames;
    std::vector<double> frame_us;
    for (const FrameRecord& f : outcome.timeline.frames)
      if (f.status == RecordStatus::ok) frame_us.push_back(f.cpu_frame_us);
    if (auto median = percentile(std::move(frame_us), 50)) chunk_frame_us.push_back(*median);
  } while (monotonic_raw_ns() < until_ns);
  // The first and last chunks' frame times show what the washout absorbed.
  device.washout = {
      {"ms", static_cast<double>(monotonic_raw_ns() - start_ns) / 1e6},
      {"frames", frames},
      {"first_frames_cpu_frame_us",
       chunk_frame_us.empty() ? nlohmann::json(nullptr) : nlohmann::json(chunk_frame_us.front())},
      {"last_frames_cpu_frame_us",
       chunk_frame_us.empty() ? nlohmann::json(nullptr) : nlohmann::json(chunk_frame_us.back())}};
  return ok_status();
}

void DeviceExecutor::settle(ScenarioBackend& backend, bool gpu_may_be_busy) {
  if (!gpu_may_be_busy) return;
  backend.set_gpu_may_be_busy();
  abandoned_device_ = true;
}

Result<ScenarioTimeline> DeviceExecutor::run(const Scenario& scenario, const RunSettings& settings,
                                             const ProgressCallback& progress) {
  GPUOVERLAP_TRY(check_planned(scenario));
  if (scenario.preemption) return run_preemption(scenario, settings, progress);
  const ValidationMark mark = device_->validation_mark();
  const std::int64_t open_start_ns = monotonic_raw_ns();
  auto kept = backend_for(scenario, settings);
  if (!kept) return kept.error();
  Kept& device = **kept;
  const std::int64_t opened_ns = monotonic_raw_ns();
  FrameLoopOutcome outcome = run_frames(*device.backend, scenario, settings, progress);
  settle(*device.backend, outcome.gpu_may_be_busy);
  device_->describe_run(outcome.timeline, mark);
  // A run that failed leaves its device in a state nothing else should measure in.
  const bool keep = !outcome.gpu_may_be_busy && !outcome.timeline.failure && !device.key.empty();
  outcome.timeline.meta["device_opening"] =
      device_opening(device.opened_for, device.runs, keep, device.washout, device.backend->facts());
  if (outcome.timeline.failure) device.backend->discard_device();
  const std::int64_t close_start_ns = monotonic_raw_ns();
  if (!keep)
    std::erase_if(kept_, [&](const std::unique_ptr<Kept>& k) { return k.get() == &device; });
  add_open_and_close_ms(outcome.timeline.meta, opened_ns - open_start_ns,
                        monotonic_raw_ns() - close_start_ns);
  return std::move(outcome.timeline);
}

Result<ScenarioTimeline> DeviceExecutor::run_preemption(const Scenario& scenario,
                                                        const RunSettings& settings,
                                                        const ProgressCallback& progress) {
  const preemption::PreemptionSpec& spec = *scenario.preemption;
  kept_.clear();  // a preemption scenario's devices are its own
  const ValidationMark mark = device_->validation_mark();
  if (spec.process == preemption::ProcessMode::same) {
    const std::int64_t open_start_ns = monotonic_raw_ns();
    auto backend = device_->open_scenario(scenario, settings,
                                          reuse_for(scenario, settings, abandoned_device()));
    if (!backend) return backend.error();
    const std::int64_t loop_start_ns = monotonic_raw_ns();
    PreemptionHooks hooks;
    const std::string key = calibration_key(spec);
    if (const auto known = calibrated_.find(key); known != calibrated_.end()) {
      hooks.known_sizes = known->second.sizes;
      hooks.known_sizes_from = known->second.scenario;
    }
    PreemptionLoopOutcome outcome =
        run_preemption_loop(**backend, scenario, settings, progress, hooks);
    settle(**backend, outcome.gpu_may_be_busy);
    // Only a calibration that ran to its end (the baseline loads after it were measured) is
    // reused; a failed run's device is not trusted, so neither is what it measured.
    const auto& info = outcome.timeline.preemption;
    if (!outcome.timeline.failure && info && info->calibrated && info->sizes_from.empty())
      calibrated_[key] = {scenario.name, info->load_sizes};
    device_->describe_run(outcome.timeline, mark);
    outcome.timeline.meta["device_opening"] =
        device_opening(scenario.name, 1, false, nullptr, (*backend)->facts());
    const std::int64_t close_start_ns = monotonic_raw_ns();
    backend->reset();
    outcome.timeline.meta["phases_ms"]["loop"] = rounded_ms(close_start_ns - loop_start_ns);
    add_open_and_close_ms(outcome.timeline.meta, loop_start_ns - open_start_ns,
                          monotonic_raw_ns() - close_start_ns);
    return std::move(outcome.timeline);
  }

  // The urgent job here, the load in a child with its own device on the same physical one.
  const Scenario urgent_only =
      preemption::make_scenario(spec, preemption::Role::urgent_only, scenario.name);
  auto opened = device_->open_scenario(urgent_only, settings,
                                       reuse_for(scenario, settings, abandoned_device()));
  if (!opened) return opened.error();
  ScenarioBackend& backend = **opened;
  auto executable = preemption::current_executable();
  if (!executable) return executable.error();
  const std::vector<std::string> arguments = {"load-process",
                                              "--spec",
                                              preemption::to_json(spec).dump(),
                                              "--device",
                                              std::to_string(device_->device_index()),
                                              "--settings",
                                              to_json(settings).dump(),
                                              "--api",
                                              api_option_name(api_)};
  auto child = preemption::LoadProcess::start(*executable, arguments);
  if (!child) return child.error().with_context("starting the load process: ");
  std::fprintf(stderr, "load process: pid %d\n", static_cast<int>((*child)->pid()));
  std::fflush(stderr);
  const std::int64_t settle_ns =
      2 * std::int64_t{settings.frame_timeout_ms} * 1'000'000 + 10'000'000'000;
  auto loading =
      (*child)->wait_for("loading", monotonic_raw_ns() + kLoadProcessReadyNs, settings.should_stop);
  if (!loading) {
    const std::string exit = (*child)->finish(monotonic_raw_ns() + settle_ns);
    return loading.error().with_context("load process (" + exit + "): ");
  }
  std::string sizes;
  for (const auto& size : loading->value("load_sizes", nlohmann::json::array()))
    if (size.is_string()) sizes += (sizes.empty() ? "" : "; ") + size.get<std::string>();
  std::fprintf(stderr, "load process: loading (%s)\n", sizes.c_str());
  std::fflush(stderr);
  PreemptionLoopOutcome outcome = run_preemption_loop(backend, urgent_only, settings, progress, {});
  settle(backend, outcome.gpu_may_be_busy);
  ScenarioTimeline& timeline = outcome.timeline;
  // Urgent records: workload 0 of the urgent-only scenario is the last of the full one.
  for (WorkloadFrameRecord& r : timeline.records) r.workload = scenario.workloads.size() - 1;
  (*child)->request_stop();
  auto result = (*child)->wait_for("result", monotonic_raw_ns() + settle_ns);
  timeline.preemption->load_process_id = (*child)->pid();
  timeline.preemption->load_process_exit = (*child)->finish(monotonic_raw_ns() + settle_ns);
  timeline.preemption->process = preemption::ProcessMode::separate;
  if (!result) {
    if (!timeline.failure)
      timeline.failure = result.error().with_context(
          "load process (" + timeline.preemption->load_process_exit + "): ");
  } else if (Status merged = preemption::merge_load_process(timeline, *result); !merged) {
    if (!timeline.failure) timeline.failure = merged.error();
  }
  // The run's facts now include the load process's; the loop's own keys stay.
  timeline.meta["preemption"].update(preemption::to_json(*timeline.preemption));
  timeline.meta["device_opening"] =
      device_opening(scenario.name, 1, false, nullptr, backend.facts());
  device_->describe_run(timeline, mark);
  return std::move(timeline);
}

Result<ScenarioTimeline> DeviceExecutor::run_load_process(const Scenario& load_only,
                                                          const RunSettings& settings,
                                                          preemption::ParentLink& parent) {
  GPUOVERLAP_TRY(check_planned(load_only));
  const ValidationMark mark = device_->validation_mark();
  auto opened = device_->open_scenario(load_only, settings,
                                       reuse_for(load_only, settings, abandoned_device()));
  if (!opened) return opened.error();
  PreemptionHooks hooks;
  hooks.on_loading = [](const ScenarioTimeline& so_far) {
    nlohmann::json sizes = nlohmann::json::array();
    if (so_far.preemption)
      for (const preemption::LoadSize& s : so_far.preemption->load_sizes)
        sizes.push_back(preemption::describe(s));
    preemption::ParentLink::send(
        "loading", {{"pid", static_cast<std::int64_t>(getpid())}, {"load_sizes", sizes}});
  };
  hooks.stop_loading = [&parent] { return parent.stop_requested(); };
  PreemptionLoopOutcome outcome = run_preemption_loop(**opened, load_only, settings, {}, hooks);
  settle(**opened, outcome.gpu_may_be_busy);
  device_->describe_run(outcome.timeline, mark);
  return std::move(outcome.timeline);
}

}  // namespace gpuoverlap
