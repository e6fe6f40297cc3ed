// `gpuoverlap run`: presets and scenario files, every one validated before any GPU work, run
// by the suite runner; the results, the summary tables and the studies' verdicts.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "analysis/report.h"
#include "analysis/variant_swap.h"
#include "analysis/verdict.h"
#include "app/command_support.h"
#include "app/commands.h"
#include "app/exit_status.h"
#include "core/atomic_file.h"
#include "core/interrupt.h"
#include "engine/suite_runner.h"
#include "preemption/preemption_analysis.h"
#include "queues/poller_placement.h"
#include "scenarios/cpu_device_sizes.h"
#include "scenarios/presets.h"
#include "scenarios/suite_estimate.h"

namespace gpuoverlap::commands {

namespace {

// --load-process, --duration-ms and --target-ms on every preemption scenario, checked again.
Status apply_preemption_overrides(const RunArguments& args, std::vector<Scenario>& scenarios) {
  for (Scenario& s : scenarios) {
    if (!s.preemption) continue;
    preemption::PreemptionSpec& spec = *s.preemption;
    if (args.load_process) spec.process = preemption::ProcessMode::separate;
    if (args.duration_ms) spec.duration_ms = *args.duration_ms;
    if (args.target_ms) spec.target_ms = *args.target_ms;
    if (Status v = preemption::validate(spec); !v)
      return v.error().with_context("scenario '" + s.name + "': ");
  }
  const bool any = std::any_of(scenarios.begin(), scenarios.end(),
                               [](const Scenario& s) { return s.preemption.has_value(); });
  if (!any && (args.load_process || args.duration_ms || args.target_ms))
    return make_error(
        "--load-process, --duration-ms and --target-ms apply to preemption "
        "scenarios only (see 'gpuoverlap list')");
  return ok_status();
}

}  // namespace

int command_run(const RunArguments& args, const std::string& command_line) {
  if (args.scenarios.empty() && !args.all_presets)
    return fail(make_error("run: name at least one preset or scenario file, or pass --all"));
  if (args.history)
    if (Status usable = check_history_location(*args.history); !usable) return fail(usable.error());
  auto placement = poller_placement(args.poller_core, *parse_poller_priority(args.poller_priority));
  if (!placement) return fail(placement.error());
  // Before the scenarios are read, so that a game frame's "cores" are those left beside the
  // poller's (its workers and the frame loop fill them), and before the device is opened: its
  // driver threads, like every thread after, leave the poller's CPU to it.
  const nlohmann::json poller_meta = try_poller_placement(*placement);
  // Every scenario is validated before any GPU work.
  std::vector<Scenario> scenarios;
  auto add = [&](Scenario&& s) -> Status {
    for (const auto& other : scenarios)
      if (other.name == s.name)
        return make_error("two scenarios are named '" + s.name +
                          "'; each needs its own output directory");
    scenarios.push_back(std::move(s));
    return ok_status();
  };
  if (args.all_presets) {
    auto suite = suite_scenarios();
    if (!suite) return fail(suite.error());
    if (!suite->covered.empty())
      std::cerr << fmt::format("--all: {} presets run once, as part of a matrix: {}\n",
                               suite->covered.size(), fmt::join(suite->covered, ", "));
    for (Scenario& s : suite->scenarios)
      if (Status added = add(std::move(s)); !added) return fail(added.error());
  }
  for (const auto& name : args.scenarios) {
    auto expanded = resolve_scenarios(name, args.all_presets ? std::string() : args.foreground);
    if (!expanded) return fail(expanded.error());
    for (Scenario& s : *expanded)
      if (Status added = add(std::move(s)); !added) return fail(added.error());
  }
  for (const Scenario& s : scenarios)
    for (const std::string& warning : s.warnings) std::cerr << warning << "\n";
  // --frames counts a study condition's frames over all its planned rounds.
  if (args.frames)
    for (Scenario& s : scenarios) s.frames = frames_per_round(*args.frames, s.rounds);
  for (Scenario& s : scenarios) {
    if (args.study_round_ms && !s.study.empty()) s.study_round_ms = *args.study_round_ms;
    if (s.rounds <= 1) continue;  // a study of one round is never extended
    if (args.study_budget_s) s.study_budget_s = *args.study_budget_s;
    if (args.study_max_rounds) s.study_max_rounds = std::max(*args.study_max_rounds, s.rounds);
  }
  if (Status s = apply_preemption_overrides(args, scenarios); !s) return fail(s.error());
  // The devices before the output folder: a list that names none is refused with nothing made.
  auto api = open_api(args.validation, args.sync_validation);
  if (!api) return fail(api.error());
  auto choices = pick_devices(**api, args.devices);
  if (!choices) return fail(choices.error());
  if (choices->several && (args.on_scenarios || args.on_frame))
    return fail(make_error("--live and --script run on one device: give --device one device"));
  auto output = prepare_output(args.out.empty() ? default_out_directory() : args.out, args.replace,
                               estimated_results_bytes(scenarios) * choices->devices.size());
  if (!output) return fail(output.error());
  announce_devices(**api, *choices);
  install_interrupt_handler();
  const VerdictSettings verdict_settings{.p50_margin = args.verdict_margin_pct / 100.0,
                                         .tail_margin = args.verdict_tail_margin_pct / 100.0};
  const std::string started_at = utc_now_iso8601();

  // One device's run: its scenarios sized for it, its results in `out`, its tables and verdicts.
  // Returns its exit status; its executor is kept in `executors` until the process ends.
  std::vector<std::unique_ptr<ScenarioExecutor>> executors;
  auto run_on = [&](const DeviceChoice& chosen, const std::filesystem::path& out,
                    SuiteOutcome& outcome) -> int {
    std::vector<Scenario> on_device = scenarios;
    const bool cpu_device =
        (*api)->devices()[chosen.index].candidate.device_class == DeviceClass::cpu;
    SizeProfile sizes = files_sizes(args.full_size ? "--full-size" : "the device is not the CPU");
    if (cpu_device && !args.full_size) {
      sizes = apply_cpu_device_sizes(on_device, {.frames = args.frames.has_value(),
                                                 .warmup = args.warmup.has_value(),
                                                 .duration_ms = args.duration_ms.has_value(),
                                                 .target_ms = args.target_ms.has_value(),
                                                 .study_budget = args.study_budget_s.has_value(),
                                                 .study_round = args.study_round_ms.has_value()});
      if (!sizes.log_line.empty()) std::cerr << sizes.log_line << "\n";
    }
    SuiteOptions options;
    options.out_directory = out;
    options.warmup_frames = args.warmup;
    options.run.frame_timeout_ms = args.timeout_ms;
    options.run.priority_fallback = args.priority_fallback;
    options.run.timestamp_queries = !args.no_timestamps;
    options.run.shader_clock = !args.no_shader_clock;
    options.run.study_shares_device = args.share_device;
    // No GPU clock to settle on the CPU device, where a washout chunk takes over a second.
    options.run.washout_ms = args.washout_ms.value_or(cpu_device ? 0 : kDefaultWashoutMs);
    options.run.stamp_memory =
        args.stamp_memory == "cached" ? StampMemory::cached : StampMemory::uncached;
    options.agreement = {args.flag_tolerance_us, args.flag_tolerance_pct / 100.0};
    options.poll_window_tolerance_us = args.poll_window_tolerance_us;
    options.run.poller = *placement;
    options.extra_meta["poller"] = poller_meta;
    options.run.should_stop = interrupt_requested;
    if (args.stop_requested)
      options.run.should_stop = [stop = args.stop_requested] {
        return interrupt_requested() || stop();
      };
    options.run.on_frame = args.on_frame;
    options.run.on_start = args.on_start;
    options.run.end_requested = args.end_requested;
    // A live session's refusal (one device: see above) leaves no folder behind.
    if (args.on_scenarios)
      if (Status usable = args.on_scenarios(on_device); !usable) {
        output->discard_if_empty();
        return fail(usable.error());
      }
    const DeviceFacts& facts = (*api)->devices()[chosen.index];
    if (args.on_device)
      args.on_device({{"api", (*api)->name()},
                      {"name", facts.candidate.name},
                      {"driver_name", facts.driver_name},
                      {"driver_info", facts.driver_info}});
    options.show_progress = isatty(STDERR_FILENO) != 0;
    options.command_line = command_line;
    options.extra_meta["device_choice"] = chosen.reason;
    options.extra_meta["device_index"] = chosen.index;
    options.extra_meta["sizes"] = sizes.meta;
    executors.push_back((*api)->executor(chosen.index));
    ScenarioExecutor& executor = *executors.back();
    // An undecided study gets another round while its budget lasts (analysis/verdict.h).
    outcome = run_suite(executor, on_device, options, std::cerr, [&](const SuiteOutcome& so_far) {
      std::vector<Scenario> more = next_study_rounds(so_far, verdict_settings, std::cerr);
      if (more.empty() && args.next_version) more = args.next_version(so_far);
      return more;
    });
    std::cout << summary_table(outcome);
    std::cout << preemption_summary_table(outcome);
    std::cout << variant_swap_lines(outcome);
    Status verdicts = write_study_verdicts(outcome, out, verdict_settings, std::cout);
    if (const std::string session = live_session_csv(outcome, out); !session.empty() && verdicts)
      verdicts = write_file_atomically(out / "live-session.csv", session);
    std::cout << "results: " << out.string() << "\n";
    // Whatever kept the verdicts from being written, the results are incomplete: the
    // environment's (analysis/ leaves its own errors untagged).
    if (!verdicts) return fail(verdicts.error().with_category(ErrorCategory::environment));
    if (interrupt_requested()) return kExitInterrupted;
    if (outcome.failure) return problem_found(outcome.failure->message);
    return kExitOk;
  };

  int status = kExitOk;
  std::vector<DeviceRun> device_runs;
  for (const DeviceChoice& chosen : choices->devices) {
    if (interrupt_requested()) break;
    const std::filesystem::path out =
        choices->several ? output->path / fmt::format("gpu{}", chosen.index) : output->path;
    if (choices->several) {
      std::error_code ec;
      std::filesystem::create_directories(out, ec);
      if (ec)
        return fail(make_error(out.string() + ": could not be made: " + ec.message(),
                               ErrorCategory::environment));
      std::cerr << fmt::format("--- device {} of {}: {} -> {}\n", device_runs.size() + 1,
                               choices->devices.size(),
                               (*api)->devices()[chosen.index].candidate.name, out.string());
    }
    DeviceRun run{chosen.index, out, (*api)->devices()[chosen.index].description, {}};
    const int device_status = run_on(chosen, out, run.outcome);
    // A device that failed stops its own scenarios only: the others still run; the worst
    // status is the run's (an interruption ends them all).
    if (device_status != kExitOk && (status == kExitOk || device_status == kExitInterrupted))
      status = device_status;
    device_runs.push_back(std::move(run));
    if (args.history && choices->several && device_status == kExitOk)
      if (const int kept = keep_run_in_history(*args.history, out, device_status); kept != kExitOk)
        status = status == kExitOk ? kept : status;
  }
  if (choices->several) {
    if (Status s = write_devices_run_json(output->path, started_at, command_line, device_runs); !s)
      status = fail(s.error());
    std::cout << fmt::format("results: {} ({} device{}, each in its gpu<index> folder)\n",
                             output->path.string(), device_runs.size(),
                             device_runs.size() == 1 ? "" : "s");
  }
  if ((*api)->validation_errors() > 0) {
    status = problem_found(
        fmt::format("{} {} validation errors, {} of them synchronization "
                    "hazards (see above)",
                    (*api)->validation_errors(), (*api)->name(), (*api)->sync_hazards()));
  } else if (interrupt_requested()) {
    status = interrupted("interrupted; the frames measured so far are written");
  }
  if (args.history && !choices->several)
    status = keep_run_in_history(*args.history, output->path, status);
  return finish(executors, status);
}

}  // namespace gpuoverlap::commands
