// `gpuoverlap selftest`: the measurement measured, each line checked against its documented
// tolerance (docs/selftest.md).
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "app/command_registry.h"
#include "app/command_support.h"
#include "app/commands.h"
#include "app/exit_status.h"
#include "core/atomic_file.h"
#include "core/enum_names.h"
#include "core/interrupt.h"
#include "engine/cpu_plan.h"
#include "engine/executor.h"
#include "engine/suite_runner.h"
#include "git_revision.h"
#include "queues/poller_placement.h"
#include "selftest/selftest.h"

namespace gpuoverlap::commands {

int command_selftest(const std::string& api_name, const std::string& device_name,
                     SelftestOptions options, bool replace, const std::string& poller_core,
                     const std::string& poller_priority, const std::string& command_line) {
  const std::string started_at = utc_now_iso8601();
  auto placement = poller_placement(poller_core, *parse_poller_priority(poller_priority));
  if (!placement) return fail(placement.error());
  options.poller = *placement;
  // Before the device is opened (engine/cpu_plan.h).
  const nlohmann::json poller_meta = try_poller_placement(options.poller, std::cerr);
  // A CPU the OS refused is not the poller's: its interrupts would name a cause elsewhere.
  if (poller_meta["cpu"].is_null()) options.poller.cpu.reset();
  if (options.out_directory.empty())
    options.out_directory = std::filesystem::path(default_out_directory("-selftest"));
  auto output = prepare_output(options.out_directory, replace, 16ull << 20);
  if (!output) return fail(output.error());
  auto api = open_api(api_name, false);
  if (!api) {
    output->discard_if_empty();
    return fail(api.error());
  }
  auto chosen = pick_device(**api, device_name);
  if (!chosen) {
    output->discard_if_empty();
    return fail(chosen.error());
  }
  options.should_stop = interrupt_requested;
  install_interrupt_handler();
  options.cpu_device = (*api)->devices()[chosen->index].candidate.device_class == DeviceClass::cpu;
  const std::unique_ptr<ScenarioExecutor> executor = (*api)->executor(chosen->index);
  const SelftestOutcome outcome = run_selftest(*executor, options, std::cerr);
  // The table, then one line per limit with what would lift it (the exit status stays 0 for
  // these): on stdout and in selftest.txt alike.
  std::string table = selftest_table(outcome.rows);
  const std::vector<std::string> limits = limit_lines(outcome.rows);
  if (!limits.empty()) {
    table += "\nlimited by this host or device (not failures):\n";
    for (const std::string& line : limits) table += "  " + line + "\n";
  }
  std::cout << "\n" << table;
  const nlohmann::json device = (*api)->devices()[chosen->index].description;
  // The device, host, start and command line as a run's meta.json and run.json give them: the
  // results history keeps a self-test as a run of its machine (history/history_rows.h).
  nlohmann::json summary = {
      {"device", device},
      {"host", host_description()},
      {"started_at", started_at},
      {"command_line", command_line},
      {"tool", {{"name", "gpuoverlap"}, {"git_revision", GPUOVERLAP_GIT_REVISION}}},
      {"frames", options.frames},
      {"poller", poller_meta},
      {"passed", outcome.passed()},
      {"limited", outcome.limited()},
      {"cpu_device", options.cpu_device},
      {"injected_end_delay_us", options.injected_end_delay_us},
      {"failure", outcome.failure ? nlohmann::json(outcome.failure->message) : nullptr}};
  Status written =
      write_file_atomically(options.out_directory / "selftest.csv", selftest_csv(outcome.rows));
  if (written) written = write_file_atomically(options.out_directory / "selftest.txt", table);
  if (written)
    written =
        write_file_atomically(options.out_directory / "selftest.json", summary.dump(2) + "\n");
  std::cout << "results: " << options.out_directory.string() << "\n";
  int status = kExitOk;
  if (!written) {
    status = fail(written.error());
  } else if (interrupt_requested()) {
    status = interrupted("interrupted; the checks measured so far are written");
  } else if (outcome.failure) {
    status = problem_found(outcome.failure->message);
  } else if (!outcome.passed()) {
    status = problem_found("some checks failed (see the table; docs/selftest.md explains each)");
  }
  return finish(*executor, status);
}

void add_selftest_command(CommandRegistry& registry) {
  struct SelftestArguments {
    std::string api, device, out, poller_core = "auto", poller_priority = "normal";
    SelftestOptions options;
    bool replace = false;
  };
  auto args = std::make_shared<SelftestArguments>();
  auto* selftest = registry.app.add_subcommand(
      "selftest",
      "Measure the measurement: poll detection latency, host-GPU round trip, agreement of the "
      "poll, timestamp and shader clocks, stamping overhead, linearity, ordering and the harness's "
      "neutrality (a negative control that must not be called intrusive); each line passes or "
      "fails against a documented tolerance (docs/selftest.md). Writes selftest.csv");
  add_api_option(*selftest, args->api);
  selftest->add_option("--device", args->device,
                       "Device index or case-insensitive name substring (default as for run)");
  selftest->add_option("--out", args->out,
                       "Output directory (default: results/<date-time>-selftest/); an existing "
                       "one must be empty");
  selftest->add_flag("--replace", args->replace,
                     "Delete the results already in --out first (only a folder gpuoverlap wrote)");
  selftest->add_option("--frames", args->options.frames, "Measured frames per measurement")
      ->check(CLI::Range(3u, 100'000u));
  selftest
      ->add_option("--rounds", args->options.ping_pong_rounds,
                   "Round trips per probe (the flag ping-pong and the semaphore)")
      ->check(CLI::Range(1u, 1'000'000u));
  selftest->add_option(
      "--poller-core", args->poller_core,
      "CPU|auto|none: the stamp poller's CPU, kept from the process's other threads "
      "(as for run; default auto)");
  selftest
      ->add_option("--poller-priority", args->poller_priority,
                   "The stamp poller's priority: normal (default), high or realtime (as for run)")
      ->check(CLI::IsMember(all_names(kPollerPriorityNames)));
  selftest
      ->add_option("--inject-end-delay-us", args->options.injected_end_delay_us,
                   "Fault injection, to see the self-test fail: move every end stamp the poller "
                   "saw this many µs later, unflagged (ordering and clock agreement then fail; "
                   "selftest.json records it)")
      ->check(CLI::Range(0.0, 1e9));
  selftest
      ->add_option("--timeout-ms", args->options.frame_timeout_ms,
                   "Deadline per frame and for the ping-pong")
      ->check(CLI::Range(1u, kMaxFrameTimeoutMs));
  registry.add(selftest, [args, &command_line = registry.command_line] {
    args->options.out_directory = args->out;
    return command_selftest(args->api, args->device, args->options, args->replace,
                            args->poller_core, args->poller_priority, command_line);
  });
}

}  // namespace gpuoverlap::commands
