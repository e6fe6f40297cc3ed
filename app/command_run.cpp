// `gpuoverlap run`: presets and scenario files, every one validated before any GPU work, run
// by the suite runner; the results, the summary tables and the studies' verdicts.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "analysis/report.h"
#include "analysis/variant_swap.h"
#include "analysis/verdict.h"
#include "app/command_registry.h"
#include "app/command_support.h"
#include "app/commands.h"
#include "app/exit_status.h"
#include "core/atomic_file.h"
#include "core/enum_names.h"
#include "core/interrupt.h"
#include "engine/concurrent_suite.h"
#include "engine/cpu_plan.h"
#include "engine/device_runs.h"
#include "engine/executor.h"
#include "engine/suite_runner.h"
#include "jobs/cpu_spec.h"
#include "preemption/preemption_analysis.h"
#include "queues/poller_placement.h"
#include "scenarios/cpu_device_sizes.h"
#include "scenarios/run_selection.h"
#include "scenarios/suite_estimate.h"

namespace gpuoverlap::commands {

namespace {

// The suite's options for one device, from the command line: what the run measures with and
// what it writes beside the results.
SuiteOptions suite_options(const RunArguments& args, const DeviceJob& job, const CpuPlan& cpus,
                           bool cpu_device, bool at_once) {
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
  options.run.sched_trace = args.sched_trace;
  options.agreement = {args.flag_tolerance_us, args.flag_tolerance_pct / 100.0};
  options.poll_window_tolerance_us = args.poll_window_tolerance_us;
  const std::size_t poller = at_once ? job.slot : 0;
  options.run.poller = cpus.placements[poller];
  options.extra_meta["poller"] = cpus.poller_meta[poller];
  options.run.should_stop = interrupt_requested;
  if (args.stop_requested)
    options.run.should_stop = [stop = args.stop_requested] {
      return interrupt_requested() || stop();
    };
  options.run.on_frame = args.on_frame;
  options.run.on_start = args.on_start;
  options.run.end_requested = args.end_requested;
  // A "\r" progress line on a terminal; devices that run at once log whole lines instead.
  options.show_progress = !at_once && isatty(STDERR_FILENO) != 0;
  // The files' frame periods are a GPU's; --full-size keeps them on the CPU too, and so do
  // devices run at once (a probe would run outside their lockstep) and live sessions (each
  // version would calibrate anew).
  options.cpu_device_pacing = cpu_device && !args.full_size && !at_once && !args.next_version;
  options.extra_meta["device_choice"] = job.chosen.reason;
  options.extra_meta["device_index"] = job.chosen.index;
  if (!cpus.cpu_shares.empty()) options.extra_meta["cpu_share"] = cpus.cpu_shares[job.slot];
  options.before_scenario = job.before_scenario;
  return options;
}

// A device's run after its suite: its tables and verdicts written, and its status.
int device_status(const SuiteOutcome& outcome, const DeviceJob& job,
                  const VerdictSettings& verdict_settings) {
  job.text << summary_table(outcome);
  job.text << preemption_summary_table(outcome);
  job.text << variant_swap_lines(outcome);
  Status verdicts = write_study_verdicts(outcome, job.out, verdict_settings, job.text);
  if (const std::string session = live_session_csv(outcome, job.out); !session.empty() && verdicts)
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
    return problem_found(fmt::format("{} of {} scenarios unsupported by this runtime, not run: {}",
                                     unsupported.size(), outcome.scenarios.size(),
                                     fmt::join(unsupported, ", ")));
  return kExitOk;
}

// What every device's run shares: the command line, the API, the CPUs, the plan, the
// scenarios, the output folder and the verdicts' settings.
struct RunContext {
  const RunArguments& args;
  const std::string& command_line;
  GpuApi& api;
  const CpuPlan& cpus;
  const ConcurrencyPlan* plan;  // devices at once; null: one after another
  const std::vector<Scenario>& scenarios;
  const PreparedOutput& output;
  const VerdictSettings& verdict_settings;
};

// One device's run: its scenarios sized for it, its results in job.out, its tables and
// verdicts. Returns its exit status.
int run_on_device(const RunContext& c, const DeviceJob& job, SuiteOutcome& outcome) {
  std::vector<Scenario> on_device = c.plan ? c.plan->scenarios[job.slot] : c.scenarios;
  const DeviceFacts& facts = c.api.devices()[job.chosen.index];
  const bool cpu_device =
      facts.candidate.device_class == DeviceClass::cpu || c.args.sized_as_cpu_device;
  SizeProfile sizes = files_sizes(c.args.full_size ? "--full-size" : "the device is not the CPU");
  if (cpu_device && !c.args.full_size) {
    sizes = apply_cpu_device_sizes(on_device, {.frames = c.args.frames.has_value(),
                                               .warmup = c.args.warmup.has_value(),
                                               .duration_ms = c.args.duration_ms.has_value(),
                                               .target_ms = c.args.target_ms.has_value(),
                                               .study_budget = c.args.study_budget_s.has_value(),
                                               .study_round = c.args.study_round_ms.has_value()});
    if (!sizes.log_line.empty()) job.log << sizes.log_line << "\n";
  }
  // A game frame's "cores" are the device's share (its thread keeps to it: run_devices).
  if (!c.cpus.cpu_shares.empty())
    for (Scenario& s : on_device)
      if (s.cpu)
        jobs::resolve_cores(*s.cpu, static_cast<std::uint32_t>(c.cpus.cpu_shares[job.slot].size()));
  SuiteOptions options = suite_options(c.args, job, c.cpus, cpu_device, c.plan != nullptr);
  options.command_line = c.command_line;
  options.extra_meta["sizes"] = sizes.meta;
  // A live session's refusal (one device: see above) leaves no folder behind.
  if (c.args.on_scenarios)
    if (Status usable = c.args.on_scenarios(on_device); !usable) {
      c.output.discard_if_empty();
      return fail(usable.error());
    }
  if (c.args.on_device)
    c.args.on_device({{"api", c.api.name()},
                      {"name", facts.candidate.name},
                      {"driver_name", facts.driver_name},
                      {"driver_info", facts.driver_info}});
  // An undecided study gets another round while its budget lasts (analysis/verdict.h).
  outcome = run_suite(job.executor, on_device, options, job.log, [&](const SuiteOutcome& so_far) {
    std::vector<Scenario> more = next_study_rounds(so_far, c.verdict_settings, job.log);
    if (more.empty() && c.args.next_version) more = c.args.next_version(so_far);
    return more;
  });
  return device_status(outcome, job, c.verdict_settings);
}

// The run's status once every device has run: each device's kept in the history, OUT/run.json
// of several devices, validation errors and an interruption.
int status_after_devices(const RunContext& c, const DeviceChoices& choices, const DeviceRuns& ran,
                         const std::string& started_at) {
  const std::vector<DeviceRun>& device_runs = ran.runs;
  const std::vector<int>& device_statuses = ran.statuses;
  int status = worst_status(device_statuses);
  if (c.args.history && choices.several)
    for (std::size_t i = 0; i < device_runs.size(); ++i)
      if (device_statuses[i] == kExitOk)
        if (const int kept =
                keep_run_in_history(*c.args.history, device_runs[i].directory, device_statuses[i]);
            kept != kExitOk)
          status = status == kExitOk ? kept : status;
  if (choices.several) {
    nlohmann::json concurrent = nullptr;
    if (c.plan)
      concurrent = {{"rounds", c.plan->rounds},
                    {"cpus", c.cpus.cpu_shares.empty() ? "shared" : "split"},
                    {"studied", c.plan->studied},
                    {"together_only", c.plan->together_only}};
    if (Status s = write_devices_run_json(c.output.path, started_at, c.command_line, device_runs,
                                          concurrent);
        !s)
      status = fail(s.error());
    std::cout << fmt::format("results: {} ({} device{}{}, each in its gpu<index> folder)\n",
                             c.output.path.string(), device_runs.size(),
                             device_runs.size() == 1 ? "" : "s", c.plan ? " at once" : "");
  }
  if (c.api.validation_errors() > 0) {
    status =
        problem_found(fmt::format("{} {} validation errors, {} of them synchronization "
                                  "hazards (see above)",
                                  c.api.validation_errors(), c.api.name(), c.api.sync_hazards()));
  } else if (interrupt_requested()) {
    status = interrupted("interrupted; the frames measured so far are written");
  }
  if (c.args.history && !choices.several)
    status = keep_run_in_history(*c.args.history, c.output.path, status);
  return status;
}

// The devices chosen, without a word (announce_devices says them once the output folder is
// made); a list that names none is refused with nothing made.
Status choose_devices(const RunArguments& args, std::unique_ptr<GpuApi>& api,
                      DeviceChoices& choices) {
  auto opened = open_api(args.api, args.validation, args.sync_validation);
  if (!opened) return opened.error();
  api = std::move(*opened);
  auto picked = pick_devices(*api, args.devices);
  if (!picked) return picked.error();
  choices = std::move(*picked);
  return ok_status();
}

// --concurrent knows its devices before the pollers are placed: they need several.
Status check_concurrent_devices(const RunArguments& args, const GpuApi& api,
                                const DeviceChoices& choices) {
  if (!choices.several)
    return make_error(
        "--concurrent runs several devices at once: give --device all or a list such as 0,1");
  if (args.concurrency_rounds > 0 && choices.devices.size() < 2)
    return make_error(fmt::format(
        "--concurrency-rounds compares a device alone with the others busy: it needs two "
        "devices or more, and {} was chosen",
        api.devices()[choices.devices.front().index].candidate.name));
  return ok_status();
}

}  // namespace

int command_run(const RunArguments& args, const std::string& command_line) {
  if (args.scenarios.empty() && !args.all_presets)
    return fail(make_error("run: name at least one preset or scenario file, or pass --all"));
  auto apis = parse_apis(args.api);
  if (!apis) return fail(apis.error());
  if (apis->size() > 1) return command_run_apis(args, *apis, command_line);
  if (args.history)
    if (Status usable = check_history_location(*args.history); !usable) return fail(usable.error());
  std::unique_ptr<GpuApi> api;
  DeviceChoices choices;
  // The pollers are placed and their CPUs reserved before the scenarios are read, so that a
  // game frame's "cores" are those left beside them, and before any device is opened
  // (engine/cpu_plan.h). --concurrent must know its devices first: the instance is opened
  // before the reservation then (threads a driver makes for an instance are not kept off;
  // those of a device are).
  if (args.concurrent) {
    if (Status chosen = choose_devices(args, api, choices); !chosen) return fail(chosen.error());
    if (Status fits = check_concurrent_devices(args, *api, choices); !fits)
      return fail(fits.error());
  }
  auto planned_cpus = plan_cpus({.poller_core = args.poller_core,
                                 .poller_priority = *parse_poller_priority(args.poller_priority),
                                 .devices = choices.devices.size(),
                                 .concurrent = args.concurrent,
                                 .split_cpus = args.split_cpus,
                                 .shared_cpus = args.shared_cpus},
                                std::cerr);
  if (!planned_cpus) return fail(planned_cpus.error());
  const CpuPlan& cpus = *planned_cpus;
  // Every scenario is validated before any GPU work.
  auto selected = select_run_scenarios(
      {.all_presets = args.all_presets, .names = args.scenarios, .foreground = args.foreground},
      std::cerr);
  if (!selected) return fail(selected.error());
  std::vector<Scenario>& scenarios = *selected;
  if (Status s = apply_run_overrides({.frames = args.frames,
                                      .study_round_ms = args.study_round_ms,
                                      .study_budget_s = args.study_budget_s,
                                      .study_max_rounds = args.study_max_rounds,
                                      .load_process = args.load_process,
                                      .duration_ms = args.duration_ms,
                                      .target_ms = args.target_ms},
                                     scenarios);
      !s)
    return fail(s.error());
  if (!api)
    if (Status chosen = choose_devices(args, api, choices); !chosen) return fail(chosen.error());
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

  const RunContext context{args,    command_line,    *api, cpus, plan ? &*plan : nullptr, scenarios,
                           *output, verdict_settings};
  const RunOnDevice run_on = [&](const DeviceJob& job, SuiteOutcome& outcome) {
    return run_on_device(context, job, outcome);
  };
  auto ran = run_devices({.api = *api,
                          .choices = choices,
                          .out = output->path,
                          .plan = plan ? &*plan : nullptr,
                          .cpu_shares = cpus.cpu_shares,
                          .should_stop = interrupt_requested,
                          .status_of_error = [](const Error& e) { return fail(e); }},
                         run_on, std::cout, std::cerr);
  if (!ran) return fail(ran.error());
  return finish(ran->executors, status_after_devices(context, choices, *ran, started_at));
}

namespace {

// The help texts of run's options that name the GPU API this build runs on.
#if defined(_WIN32)
constexpr const char* kValidationHelp =
    "Enable the D3D12 debug layer (D3D12GetDebugInterface; its messages go to the debugger "
    "output)";
constexpr const char* kSyncValidationHelp =
    "Vulkan's synchronization validation: not in the D3D12 build (refused)";
constexpr const char* kShaderClockHelp =
    "Do not read a shader clock with the stamps (D3D12 shader model 5.x has none: clk_* columns "
    "stay empty either way)";
#else
constexpr const char* kValidationHelp =
    "Enable VK_LAYER_KHRONOS_validation; any validation error fails the run";
constexpr const char* kSyncValidationHelp =
    "Also enable its synchronization validation (implies --validation): every missing or too "
    "weak barrier is reported as a SYNC-HAZARD error and fails the run";
constexpr const char* kShaderClockHelp =
    "Do not read VK_KHR_shader_clock with the stamps (clk_* columns stay empty)";
#endif

// What runs and for how long: the scenarios, the suite, sizes and the studies' rounds and margins.
void add_what_and_how_long_options(CLI::App* run, RunArguments& run_args) {
  run->add_option("scenario", run_args.scenarios,
                  "Preset names (see 'gpuoverlap list') or paths to scenario .toml files");
  run->add_flag("--all", run_args.all_presets,
                "Run the preset suite: every built-in preset, each configuration once (the "
                "twelve preemption-<load>-<priority> presets run as part of preemption-matrix)");
  const CpuDeviceSizes cpu_sizes;
  run->add_flag(
      "--full-size", run_args.full_size,
      fmt::format("On a CPU device (lavapipe) keep the files' sizes; by default it runs "
                  "at most {} frames per scenario, {} per study condition, {} ms of "
                  "preemption on a {} ms load, and paces a game frame at {:g}x its "
                  "unpaced frame interval, measured once per study",
                  cpu_sizes.frames, cpu_sizes.study_frames, cpu_sizes.preemption_duration_ms,
                  cpu_sizes.preemption_target_ms, kCpuDevicePeriodHeadroom));
  run->add_option("--verdict-margin-pct", run_args.verdict_margin_pct,
                  "Studies: a condition is intrusive on a metric when its median is worse than "
                  "the baseline's by more than this, with confidence (default 5)")
      ->check(CLI::Range(0.0, 1000.0));
  run->add_option("--verdict-tail-margin-pct", run_args.verdict_tail_margin_pct,
                  "Studies: ... or when more of its frames than this (in percentage points) lie "
                  "beyond the baseline's p99 than the baseline's own do (default 1)")
      ->check(CLI::Range(0.0, 100.0));
  run->add_option("--late-tolerance-ms", run_args.late_tolerance_ms,
                  "Studies of a paced frame: a frame is late when its interval exceeds the "
                  "period by more than this (default: the larger of 5 % of the period and the "
                  "baseline's p95 interval less the period, at most half a period)")
      ->check(CLI::Range(0.0, 10000.0));
  run->add_option("--study-budget-s", run_args.study_budget_s,
                  "Studies: while the verdict is undecided, add interleaved rounds until this "
                  "much wall time is spent (overrides the file's budget_s, default 600; 0 adds "
                  "none; on a CPU device 0 unless given)")
      ->check(CLI::Range(0.0, 7 * 24 * 3600.0));
  run->add_option("--study-max-rounds", run_args.study_max_rounds,
                  "Studies: at most this many rounds in all (overrides max_rounds, default 100)")
      ->check(CLI::Range(1u, 1000u));
  run->add_option("--study-round-ms", run_args.study_round_ms,
                  "Studies: each condition's round measures its frames or for this long, "
                  "whichever ends first, so a condition that slows the frames does not lengthen "
                  "the round (overrides round_ms; 0: no limit; on a CPU device 0 unless given)")
      ->check(CLI::Range(0u, kMaxStudyRoundMs));
  run->add_option("--foreground", run_args.foreground,
                  "For a study (e.g. non-intrusiveness): the preset or scenario file measured "
                  "under its conditions, instead of the study's own foreground");
  run->add_option(
         "--frames", run_args.frames,
         "Measured frames per scenario (overrides the file); for a study, per condition over all "
         "its rounds")
      ->check(CLI::Range(1u, 1'000'000u));
  run->add_option("--warmup", run_args.warmup, "Warm-up frames, dropped (overrides the file)")
      ->check(CLI::Range(0u, 1'000'000u));
}

// Which devices, at once or not, and where the results go; the device's settings.
void add_device_options(CLI::App* run, RunArguments& run_args) {
  run->add_option("--device", run_args.devices,
                  "Device index or case-insensitive name substring (default: first discrete GPU, "
                  "else integrated, else lavapipe); all: every GPU, one after the other; a list "
                  "such as 0,2: those devices. With all or a list each device's results go to "
                  "OUT/gpu<index>/ and OUT/run.json lists them (docs/multi-gpu.md)")
      ->take_all()
      ->expected(1);
  CLI::Option* concurrent = run->add_flag(
      "--concurrent", run_args.concurrent,
      "With several devices: run every scenario on all of them at once, a thread and a poller "
      "(on a CPU of its own) per device, each scenario started together once every device has "
      "finished the one before (docs/multi-gpu.md)");
  run->add_option("--concurrency-rounds", run_args.concurrency_rounds,
                  "With --concurrent: answer whether one device's work disturbs another's. Each "
                  "frame scenario runs in this many rounds (3 or more), each round on all devices "
                  "together and on each device alone while the others wait; each device's "
                  "together-against-alone verdict goes to gpu<index>/<scenario>/verdict.csv, "
                  "and report OUT puts them side by side")
      ->check(CLI::Range(kMinConcurrencyRounds, kMaxConcurrencyRounds))
      ->needs(concurrent);
  CLI::Option* split_cpus =
      run->add_flag("--split-cpus", run_args.split_cpus,
                    "With --concurrent: give each device's threads (frame loop, a game frame's "
                    "workers, background compiles, the driver's) a share of the CPUs left beside "
                    "the pollers, so that CPU-bound scenarios do not compete across devices; a "
                    "game frame's \"cores\" are then its share. The default with --concurrent "
                    "where every share gets two CPUs or more (Linux); this flag refuses to run "
                    "otherwise")
          ->needs(concurrent);
  run->add_flag("--shared-cpus", run_args.shared_cpus,
                "With --concurrent: let every device's threads run on every CPU but the "
                "pollers', as in a run on one device, so that the devices compete for the "
                "cores (what a host running several GPU jobs at once sees)")
      ->needs(concurrent)
      ->excludes(split_cpus);
  run->add_option("--out", run_args.out,
                  "Output directory (default: results/<date-time>/); created and checked "
                  "(writable, free space) before any GPU work; an existing one must be empty");
  run->add_option("--history", run_args.history,
                  "Keep the run in the results history once it completed: a SQLite file or "
                  "postgresql://... (no value: $GPUOVERLAP_DB; docs/history.md)")
      ->expected(0, 1);
  run->add_flag("--replace", run_args.replace,
                "Delete the results already in --out first (only a folder gpuoverlap wrote)");
  run->add_option("--timeout-ms", run_args.timeout_ms,
                  "Deadline per frame from gate release; a frame past it is reported as a timeout")
      ->check(CLI::Range(1u, kMaxFrameTimeoutMs));
  run->add_flag(
      "--priority-fallback", run_args.priority_fallback,
      "When the driver refuses a queue priority, run at the one granted (recorded in meta.json) "
      "instead of stopping");
  run->add_flag(
      "--no-timestamps", run_args.no_timestamps,
      "Record no timestamp queries (poll clock only): an end-of-workload timestamp waits for all "
      "earlier work on its queue and can serialise dispatches that would overlap");
  add_api_option(*run, run_args.api, /*several=*/true);
  run->add_flag("--validation", run_args.validation, kValidationHelp);
  run->add_flag("--sync-validation", run_args.sync_validation, kSyncValidationHelp);
  run->add_flag("--no-shader-clock", run_args.no_shader_clock, kShaderClockHelp);
  CLI::Option* share_device = run->add_flag(
      "--share-device", run_args.share_device,
      "Run all conditions and rounds of a study on one device instead of opening one per "
      "scenario, with a washout before each (--washout-ms; docs/background.md)");
  run->add_flag("--device-per-scenario", run_args.device_per_scenario,
                "Create a Vulkan device for every scenario and destroy it after; by default a "
                "frame scenario outside a study runs on an idle device an earlier scenario created "
                "with the same queues, priorities and features (a study's scenarios and preemption "
                "scenarios always create their own; meta.json device_opening.api_device says "
                "which)");
  run->add_option("--washout-ms", run_args.washout_ms,
                  "With --share-device, run the foreground alone (no background work, "
                  "unmeasured) for this long before each condition, so that the last one's load "
                  "does not carry over (default 500, 0 on a CPU device; 0: none)")
      ->check(CLI::Range(0u, kMaxWashoutMs))
      ->needs(share_device);
}

// How the stamps are taken and judged; fault injection; the preemption scenarios' durations.
void add_measurement_options(CLI::App* run, RunArguments& run_args) {
  run->add_flag("--sched-trace", run_args.sched_trace,
                "Take the kernel's scheduling record of each frame scenario (Linux, root: "
                "tracefs) and explain every wait of the frame loop, the workers and the poller: "
                "who held the CPU, how it was lost, what gave it back (sched_waits.csv, "
                "frames.csv's sched_* columns, meta.json sched_trace). Where it cannot be taken "
                "the run goes on and meta.json says why (docs/sched-trace.md)");
  run->add_option("--inject-frame-delay-us", run_args.inject_frame_delay_us,
                  "Fault injection, to see compare's frame gate catch it: a game frame's loop "
                  "starts each frame this many µs later than its pace (meta.json cpu "
                  "records it; scenarios without [cpu] ignore it)")
      ->check(CLI::Range(0u, 10'000'000u));
  run->add_option("--stamp-memory", run_args.stamp_memory,
                  "Stamp memory: uncached (default; host-visible, coherent, write-combined) or "
                  "cached (host-cached, coherent: the CPU spins in its cache)")
      ->check(CLI::IsMember({"uncached", "cached"}));
  run->add_option("--flag-tolerance-us", run_args.flag_tolerance_us,
                  "A row's clocks that differ by more than max(this, --flag-tolerance-pct of its "
                  "duration) get a flag in the records (default 10)")
      ->check(CLI::Range(0.0, 1e9));
  run->add_option("--poller-core", run_args.poller_core,
                  "CPU|auto|none. Pin the stamp poller to this CPU (one of the process's "
                  "affinity mask) and keep the process's other threads off it, so a game "
                  "frame's workers leave it free. auto (default): the mask's quietest CPU (fewest "
                  "interrupts) where "
                  "there are at least 4, else unpinned; none: unpinned. With --concurrent, one "
                  "CPU per device (a list such as 2,3); auto takes the quietest where 3 are left "
                  "beside them");
  run->add_option("--poller-priority", run_args.poller_priority,
                  "The stamp poller's priority: normal (default), high (nice -10 / "
                  "THREAD_PRIORITY_HIGHEST) or realtime (SCHED_FIFO / TIME_CRITICAL: give it a "
                  "core of its own). Where the OS refuses, one line says so and the run goes on "
                  "at what was granted (meta.json \"poller\")")
      ->check(CLI::IsMember(all_names(kPollerPriorityNames)));
  run->add_option("--poll-window-tolerance-us", run_args.poll_window_tolerance_us,
                  "A poll stamp whose detection window is wider is flagged disturbed (records "
                  "poll_disturbed, summary poll_disturbed). Default: 8 x the scenario's p10 "
                  "window (a quiet pass or two), at least 2 us")
      ->check(CLI::Range(0.0, 1e9));
  run->add_flag("--load-process", run_args.load_process,
                "Preemption scenarios: run the load in a second gpuoverlap process (its own "
                "device and queue, as another application), started and stopped by this one");
  run->add_option("--duration-ms", run_args.duration_ms,
                  "Preemption scenarios: how long the urgent job is submitted (overrides "
                  "duration_ms)")
      ->check(CLI::Range(preemption::kMinDurationMs, preemption::kMaxDurationMs));
  run->add_option("--target-ms", run_args.target_ms,
                  "Preemption scenarios: the load's duration alone, its size calibrated to it "
                  "(overrides target_ms)")
      ->check(CLI::Range(preemption::kMinTargetMs, preemption::kMaxTargetMs));
  run->add_option("--flag-tolerance-pct", run_args.flag_tolerance_pct,
                  "Relative part of the flag tolerance, percent of the duration (default 1)")
      ->check(CLI::Range(0.0, 1000.0));
}

// The viewer watching the run, and the scripted edits.
void add_live_options(CLI::App* run, RunArguments& run_args) {
  auto* live_flag = run->add_flag(
      "--live", run_args.live,
      "Watch the run in the viewer: each measured frame as it completes (docs/viewer.md); "
      "closing the window stops the run after the current frame. Needs a display");
  run->add_option("--screenshot", run_args.live_screenshot,
                  "With --live: once the run has ended, write the window to this PNG (and "
                  "FILE.layout.json) and exit")
      ->needs(live_flag);
  run->add_option("--script", run_args.live_script,
                  "Edit the running scenario from this file, as the viewer's controls do (with "
                  "--live or without a window): 'wait N', an edit ('iterations \"Compute B\" 2', "
                  "'undepend C B', ...), 'save FILE.toml', 'end' (docs/viewer.md, \"Scripts\")");
  run->add_option("--exit-after-frames", run_args.live_exit_after_frames,
                  "With --screenshot: window frames rendered after the run ended (default 3)")
      ->needs(live_flag)
      ->check(CLI::Range(1u, 100000u));
}

}  // namespace

void add_run_command(CommandRegistry& registry) {
  auto args = std::make_shared<RunArguments>();
  auto* run = registry.app.add_subcommand("run", "Run presets or scenario files and write results");
  add_what_and_how_long_options(run, *args);
  add_device_options(run, *args);
  add_measurement_options(run, *args);
  add_live_options(run, *args);
  registry.add(run, [args, &command_line = registry.command_line] {
    return args->live                   ? command_run_live(*args, command_line)
           : !args->live_script.empty() ? command_run_scripted(*args, command_line)
                                        : command_run(*args, command_line);
  });
}

}  // namespace gpuoverlap::commands
