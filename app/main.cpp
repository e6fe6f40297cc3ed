// gpuoverlap: the command line. Each command adds its own options (app/command_registry.h);
// this parses the arguments and hands them to the one command given. Exit status:
// app/exit_status.h, the same for every command.
#include <CLI/CLI.hpp>
#include <exception>
#include <string>

#include "app/command_registry.h"
#include "app/exit_status.h"
#include "core/redact.h"
#include "git_revision.h"

namespace {

#if defined(_WIN32)
#define GPUOVERLAP_API_NAME "D3D12 or Vulkan"
#else
#define GPUOVERLAP_API_NAME "Vulkan"
#endif

constexpr const char* kExitStatusHelp =
    "Exit status: 0 ok; 1 it ran and found a problem (a regression, a failed frame or check); 2 "
    "bad input (command line, scenario file, results or output folder), nothing ran; 3 the "
    "environment failed (no " GPUOVERLAP_API_NAME
    " driver or device, results not writable); 130 interrupted (SIGINT, SIGTERM or SIGHUP; what "
    "was measured is written).";

}  // namespace

int main(int argc, char** argv) {
  using namespace gpuoverlap;
  using namespace gpuoverlap::commands;
  // Recorded in every results folder and the history: a password in a database URI is not.
  std::string command_line;
  for (int i = 0; i < argc; ++i) command_line += (i ? " " : "") + without_password(argv[i]);

  CLI::App app{
      "gpuoverlap: measures GPU queue overlap, barrier cost and preemption from inside the work.\n"
      "Each workload stamps its first-thread start and last-thread finish into memory that a CPU\n"
      "thread polls; timestamp queries are recorded beside them. Results: CSV + meta.json."};
  app.set_version_flag("--version", std::string("gpuoverlap ") + GPUOVERLAP_GIT_REVISION);
  app.require_subcommand(1);
  app.footer(kExitStatusHelp);

  CommandRegistry registry{app, command_line, {}};
  for (auto add : {add_devices_command, add_host_command, add_list_command, add_validate_command,
                   add_run_command, add_selftest_command, add_compare_command, add_report_command,
                   add_view_command, add_history_commands, add_load_process_command})
    add(registry);
  for (CLI::App* command : app.get_subcommands([](CLI::App*) { return true; }))
    command->footer(kExitStatusHelp);
  for (const auto& [command, run] : registry.commands) command->footer(kExitStatusHelp);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitOk : kExitBadInput;
  }
  // Every failure is meant to come back as a value; this only keeps one that escaped (a bug,
  // or std::bad_alloc) from ending in std::terminate and a core dump.
  try {
    for (const auto& [command, run] : registry.commands)
      if (command->parsed()) return run();
  } catch (const std::exception& e) {
    return fail(
        make_error(std::string("unexpected error: ") + e.what(), ErrorCategory::environment));
  }
  return kExitBadInput;
}
