// `gpuoverlap run`: presets and scenario files, every one validated before any GPU work, run
// by the suite runner; the results, the summary tables and the studies' verdicts.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "analysis/report.h"
#include "analysis/variant_swap.h"
#include "analysis/verdict.h"
#include "app/command_support.h"
#include "app/commands.h"
#include "app/exit_status.h"
#include "core/atomic_file.h"
#include "core/cpu_affinity.h"
#include "core/interrupt.h"
#include "engine/concurrent_suite.h"
#include "engine/suite_runner.h"
#include "jobs/cpu_spec.h"
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
  const PollerPriority poller_priority = *parse_poller_priority(args.poller_priority);
  std::unique_ptr<GpuApi> api;
  DeviceChoices choices;
  // The devices are chosen silently; a list that names none is refused with nothing made.
  auto choose_devices = [&]() -> Status {
    auto opened = open_api(args.validation, args.sync_validation);
    if (!opened) return opened.error();
    api = std::move(*opened);
    auto picked = pick_devices(*api, args.devices);
    if (!picked) return picked.error();
    choices = std::move(*picked);
    return ok_status();
  };
  // One poller placement per device that runs at once (one, unless --concurrent), tried and
  // its CPU reserved before the scenarios are read, so that a game frame's "cores" are those
  // left beside the pollers' (its workers and the frame loop fill them), and before any device
  // is opened: its driver threads, like every thread after, leave the pollers' CPUs to them.
  // --concurrent must know its devices first: the instance is opened before the reservation
  // then (threads a driver makes for an instance are not kept off; those of a device are).
  if (args.concurrent) {
    if (Status chosen = choose_devices(); !chosen) return fail(chosen.error());
    if (!choices.several)
      return fail(make_error(
          "--concurrent runs several devices at once: give --device all or a list such as 0,1"));
    if (args.concurrency_rounds > 0 && choices.devices.size() < 2)
      return fail(make_error(fmt::format(
          "--concurrency-rounds compares a device alone with the others busy: it needs two "
          "devices or more, and {} was chosen",
          api->devices()[choices.devices.front().index].candidate.name)));
  }
  // One poller at a time, or one per device at once.
  auto placed = poller_placements(args.poller_core, poller_priority,
                                  args.concurrent ? choices.devices.size() : 1);
  if (!placed) return fail(placed.error());
  const std::vector<PollerPlacement> placements = std::move(*placed);
  const std::vector<nlohmann::json> poller_meta = try_poller_placements(placements);
  // The CPUs left beside the pollers (this thread's, after the reservation), a share each.
  std::vector<std::vector<int>> cpu_shares;  // each device's CPUs; empty: all of them
  if (args.split_cpus) {
#if defined(_WIN32)
    return fail(make_error(
        "--split-cpus: on Windows a new thread takes the process's CPUs, not its creator's, so "
        "a device's threads cannot be kept to a share"));
#endif
    auto shares = split_cpus(usable_cpu_ids(), choices.devices.size());
    if (!shares) return fail(shares.error());
    cpu_shares = std::move(*shares);
  } else if (args.concurrent && !args.shared_cpus && choices.devices.size() > 1) {
    // Split by default: two CPU-bound scenarios (a game frame fills every core) sharing the
    // cores slow each other down more than the GPUs do (docs/multi-gpu.md, "CPUs").
#if defined(_WIN32)
    std::cerr << "--concurrent: the devices share the CPUs (on Windows a device's threads "
                 "cannot be kept to a share)\n";
#else
    if (auto shares = split_cpus(usable_cpu_ids(), choices.devices.size()))
      cpu_shares = std::move(*shares);
    else
      std::cerr << fmt::format("--concurrent: the devices share the CPUs ({})\n",
                               shares.error().message);
#endif
  }
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
    for (const std::string& skipped : suite->not_in_run_all)
      std::cerr << "--all: not run, a study longer than the suite's minute: " << skipped << "\n";
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
  if (!api)
    if (Status chosen = choose_devices(); !chosen) return fail(chosen.error());
  if (choices.several && (args.on_scenarios || args.on_frame))
    return fail(make_error("--live and --script run on one device: give --device one device"));
  // Each device's scenarios: all of them, or as the concurrent plan has them.
  std::optional<ConcurrencyPlan> plan;
  if (args.concurrent) {
    auto planned = plan_concurrent(scenarios, choices.devices.size(), args.concurrency_rounds);
    if (!planned) return fail(planned.error());
    plan = std::move(*planned);
  }
  auto scenarios_of = [&](std::size_t slot) -> const std::vector<Scenario>& {
    return plan ? plan->scenarios[slot] : scenarios;
  };
  std::uint64_t needed_bytes = 0;
  for (std::size_t slot = 0; slot < choices.devices.size(); ++slot)
    needed_bytes += estimated_results_bytes(scenarios_of(slot));
  auto output = prepare_output(args.out.empty() ? default_out_directory() : args.out, args.replace,
                               needed_bytes);
  if (!output) return fail(output.error());
  announce_devices(*api, choices);
  if (plan && !plan->together_only.empty())
    std::cerr << fmt::format(
        "--concurrency-rounds: {} run together once, outside the question (studies and "
        "preemption scenarios): {}\n",
        plan->together_only.size(), fmt::join(plan->together_only, ", "));
  install_interrupt_handler();
  const VerdictSettings verdict_settings{
      .p50_margin = args.verdict_margin_pct / 100.0,
      .tail_margin = args.verdict_tail_margin_pct / 100.0,
      .late_tolerance_us =
          args.late_tolerance_ms ? std::optional(*args.late_tolerance_ms * 1000.0) : std::nullopt};
  const std::string started_at = utc_now_iso8601();

  // What one device runs: its scenarios, its poller (the slot's, with --concurrent), its
  // executor, the hook that holds it in step with the others, and where its text goes.
  struct DeviceJob {
    const DeviceChoice& chosen;
    std::size_t slot = 0;  // its place in choices.devices
    std::filesystem::path out;
    ScenarioExecutor& executor;
    std::function<nlohmann::json(std::size_t, const Scenario&)> before_scenario;
    std::ostream& text;  // the tables and verdicts (stdout)
    std::ostream& log;   // progress and notes (stderr)
  };
  // One device's run: its scenarios sized for it, its results in job.out, its tables and
  // verdicts. Returns its exit status.
  auto run_on = [&](const DeviceJob& job, SuiteOutcome& outcome) -> int {
    std::vector<Scenario> on_device = scenarios_of(job.slot);
    const bool cpu_device =
        api->devices()[job.chosen.index].candidate.device_class == DeviceClass::cpu;
    SizeProfile sizes = files_sizes(args.full_size ? "--full-size" : "the device is not the CPU");
    if (cpu_device && !args.full_size) {
      sizes = apply_cpu_device_sizes(on_device, {.frames = args.frames.has_value(),
                                                 .warmup = args.warmup.has_value(),
                                                 .duration_ms = args.duration_ms.has_value(),
                                                 .target_ms = args.target_ms.has_value(),
                                                 .study_budget = args.study_budget_s.has_value(),
                                                 .study_round = args.study_round_ms.has_value()});
      if (!sizes.log_line.empty()) job.log << sizes.log_line << "\n";
    }
    // A game frame's "cores" are the device's share (its thread keeps to it: see below).
    if (!cpu_shares.empty())
      for (Scenario& s : on_device)
        if (s.cpu)
          jobs::resolve_cores(*s.cpu, static_cast<std::uint32_t>(cpu_shares[job.slot].size()));
    SuiteOptions options;
    options.out_directory = job.out;
    options.warmup_frames = args.warmup;
    options.run.frame_timeout_ms = args.timeout_ms;
    options.run.priority_fallback = args.priority_fallback;
    options.run.timestamp_queries = !args.no_timestamps;
    options.run.shader_clock = !args.no_shader_clock;
    options.run.study_shares_device = args.share_device;
    options.run.reuse_devices = !args.device_per_scenario;
    // No GPU clock to settle on the CPU device, where a washout chunk takes over a second.
    options.run.washout_ms = args.washout_ms.value_or(cpu_device ? 0 : kDefaultWashoutMs);
    options.run.stamp_memory =
        args.stamp_memory == "cached" ? StampMemory::cached : StampMemory::uncached;
    options.run.injected_frame_delay_us = args.inject_frame_delay_us;
    options.agreement = {args.flag_tolerance_us, args.flag_tolerance_pct / 100.0};
    options.poll_window_tolerance_us = args.poll_window_tolerance_us;
    const std::size_t poller = plan ? job.slot : 0;
    options.run.poller = placements[poller];
    options.extra_meta["poller"] = poller_meta[poller];
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
    const DeviceFacts& facts = api->devices()[job.chosen.index];
    if (args.on_device)
      args.on_device({{"api", api->name()},
                      {"name", facts.candidate.name},
                      {"driver_name", facts.driver_name},
                      {"driver_info", facts.driver_info}});
    // A "\r" progress line on a terminal; devices that run at once log whole lines instead.
    options.show_progress = !plan && isatty(STDERR_FILENO) != 0;
    // The files' frame periods are a GPU's; --full-size keeps them on the CPU too, and so do
    // devices run at once (a probe would run outside their lockstep) and live sessions (each
    // version would calibrate anew).
    options.cpu_device_pacing = cpu_device && !args.full_size && !plan && !args.next_version;
    options.command_line = command_line;
    options.extra_meta["device_choice"] = job.chosen.reason;
    options.extra_meta["device_index"] = job.chosen.index;
    options.extra_meta["sizes"] = sizes.meta;
    if (!cpu_shares.empty()) options.extra_meta["cpu_share"] = cpu_shares[job.slot];
    options.before_scenario = job.before_scenario;
    // An undecided study gets another round while its budget lasts (analysis/verdict.h).
    outcome = run_suite(job.executor, on_device, options, job.log, [&](const SuiteOutcome& so_far) {
      std::vector<Scenario> more = next_study_rounds(so_far, verdict_settings, job.log);
      if (more.empty() && args.next_version) more = args.next_version(so_far);
      return more;
    });
    job.text << summary_table(outcome);
    job.text << preemption_summary_table(outcome);
    job.text << variant_swap_lines(outcome);
    Status verdicts = write_study_verdicts(outcome, job.out, verdict_settings, job.text);
    if (const std::string session = live_session_csv(outcome, job.out);
        !session.empty() && verdicts)
      verdicts = write_file_atomically(job.out / "live-session.csv", session);
    job.text << "results: " << job.out.string() << "\n";
    // Whatever kept the verdicts from being written, the results are incomplete: the
    // environment's (analysis/ leaves its own errors untagged).
    if (!verdicts) return fail(verdicts.error().with_category(ErrorCategory::environment));
    if (interrupt_requested()) return kExitInterrupted;
    if (outcome.failure) return problem_found(outcome.failure->message);
    // What was asked for did not all run: the rest was measured and written, and the status
    // says that something was not.
    std::vector<std::string> unsupported;
    for (const ScenarioOutcome& s : outcome.scenarios)
      if (s.unsupported()) unsupported.push_back(s.scenario.name);
    if (!unsupported.empty())
      return problem_found(
          fmt::format("{} of {} scenarios unsupported by this runtime, not run: {}",
                      unsupported.size(), outcome.scenarios.size(), fmt::join(unsupported, ", ")));
    return kExitOk;
  };

  int status = kExitOk;
  // A device that failed stops its own scenarios only: the others still run; the worst status
  // is the run's (an interruption ends them all).
  auto take_status = [&](int device_status) {
    if (device_status != kExitOk && (status == kExitOk || device_status == kExitInterrupted))
      status = device_status;
  };
  auto device_folder = [&](const DeviceChoice& chosen) -> Result<std::filesystem::path> {
    if (!choices.several) return output->path;
    const std::filesystem::path out = output->path / fmt::format("gpu{}", chosen.index);
    std::error_code ec;
    std::filesystem::create_directories(out, ec);
    if (ec)
      return make_error(out.string() + ": could not be made: " + ec.message(),
                        ErrorCategory::environment);
    return out;
  };
  std::vector<std::unique_ptr<ScenarioExecutor>> executors;  // kept until the process ends
  std::vector<DeviceRun> device_runs;
  std::vector<int> device_statuses;
  if (!plan) {
    for (const DeviceChoice& chosen : choices.devices) {
      if (interrupt_requested()) break;
      auto out = device_folder(chosen);
      if (!out) return fail(out.error());
      if (choices.several)
        std::cerr << fmt::format("--- device {} of {}: {} -> {}\n", device_runs.size() + 1,
                                 choices.devices.size(),
                                 api->devices()[chosen.index].candidate.name, out->string());
      DeviceRun run{chosen.index, *out, api->devices()[chosen.index].description, {}};
      executors.push_back(api->executor(chosen.index));
      device_statuses.push_back(
          run_on({chosen, device_runs.size(), *out, *executors.back(), {}, std::cout, std::cerr},
                 run.outcome));
      take_status(device_statuses.back());
      device_runs.push_back(std::move(run));
    }
  } else {
    // Every device at once, a thread each, in step (engine/concurrent_suite.h). A neighbour is
    // waited for at most half an hour per scenario: its own frame deadlines end a hang first.
    DeviceLockstep lockstep(*plan, std::chrono::minutes(30), interrupt_requested);
    std::vector<std::unique_ptr<PrefixedLines>> logs;
    std::vector<std::ostringstream> texts(choices.devices.size());
    for (const DeviceChoice& chosen : choices.devices) {
      auto out = device_folder(chosen);
      if (!out) return fail(out.error());
      device_runs.push_back({chosen.index, *out, api->devices()[chosen.index].description, {}});
      executors.push_back(api->executor(chosen.index));
      logs.push_back(
          std::make_unique<PrefixedLines>(std::cerr, fmt::format("[gpu{}] ", chosen.index)));
    }
    std::cerr << fmt::format(
        "--- {} device{} at once{}, each scenario started together on all of them\n",
        choices.devices.size(), choices.devices.size() == 1 ? "" : "s",
        plan->rounds > 0 ? fmt::format(" ({} concurrency rounds: each frame scenario also alone "
                                       "on each device)",
                                       plan->rounds)
                         : "");
    device_statuses.assign(choices.devices.size(), kExitOk);
    std::vector<std::thread> threads;
    for (std::size_t slot = 0; slot < choices.devices.size(); ++slot)
      threads.emplace_back([&, slot] {
        // Before its device is opened: the driver's threads, the frame loop and the workers
        // made from here on keep to the share.
        if (!cpu_shares.empty() && !restrict_this_thread_to(cpu_shares[slot]))
          *logs[slot] << "keeping this device's threads to its CPUs was refused; "
                         "they run on every CPU but the pollers'\n";
        try {
          device_statuses[slot] =
              run_on({choices.devices[slot], slot, device_runs[slot].directory, *executors[slot],
                      lockstep.before_scenario(slot), texts[slot], *logs[slot]},
                     device_runs[slot].outcome);
        } catch (const std::exception& e) {
          device_statuses[slot] =
              fail(make_error(fmt::format("device {}: {}", choices.devices[slot].index, e.what()),
                              ErrorCategory::environment));
        }
        lockstep.done(slot);
      });
    for (std::thread& t : threads) t.join();
    logs.clear();
    for (std::size_t slot = 0; slot < choices.devices.size(); ++slot) {
      std::cout << fmt::format("--- device gpu{}: {}\n", choices.devices[slot].index,
                               api->devices()[choices.devices[slot].index].candidate.name)
                << texts[slot].str();
      take_status(device_statuses[slot]);
    }
  }
  if (args.history && choices.several)
    for (std::size_t i = 0; i < device_runs.size(); ++i)
      if (device_statuses[i] == kExitOk)
        if (const int kept =
                keep_run_in_history(*args.history, device_runs[i].directory, device_statuses[i]);
            kept != kExitOk)
          status = status == kExitOk ? kept : status;
  if (choices.several) {
    nlohmann::json concurrent = nullptr;
    if (plan)
      concurrent = {{"rounds", plan->rounds},
                    {"cpus", cpu_shares.empty() ? "shared" : "split"},
                    {"studied", plan->studied},
                    {"together_only", plan->together_only}};
    if (Status s =
            write_devices_run_json(output->path, started_at, command_line, device_runs, concurrent);
        !s)
      status = fail(s.error());
    std::cout << fmt::format("results: {} ({} device{}{}, each in its gpu<index> folder)\n",
                             output->path.string(), device_runs.size(),
                             device_runs.size() == 1 ? "" : "s", plan ? " at once" : "");
  }
  if (api->validation_errors() > 0) {
    status =
        problem_found(fmt::format("{} {} validation errors, {} of them synchronization "
                                  "hazards (see above)",
                                  api->validation_errors(), api->name(), api->sync_hazards()));
  } else if (interrupt_requested()) {
    status = interrupted("interrupted; the frames measured so far are written");
  }
  if (args.history && !choices.several)
    status = keep_run_in_history(*args.history, output->path, status);
  return finish(executors, status);
}

}  // namespace gpuoverlap::commands
