// How main() learns the commands: each command's file adds its subcommand to the CLI11 app with
// its options and help texts, bound to arguments it owns, and says what runs it once parsed
// (`add_<name>_command`). main() adds them in the order --help lists them, parses, and runs the
// one given.
//
// Contract: the arguments an option is bound to live as long as the app (each command keeps
// them in state its run function shares); a run function is called at most once, after parsing.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace gpuoverlap::commands {

struct CommandRegistry {
  CLI::App& app;
  const std::string& command_line;  // as results record it: a password left out
  // Each runnable (sub)command and its entry point, returning the exit status.
  std::vector<std::pair<CLI::App*, std::function<int()>>> commands;

  void add(CLI::App* command, std::function<int()> run) {
    commands.emplace_back(command, std::move(run));
  }
};

void add_devices_command(CommandRegistry& registry);
void add_host_command(CommandRegistry& registry);
void add_list_command(CommandRegistry& registry);
void add_validate_command(CommandRegistry& registry);
void add_run_command(CommandRegistry& registry);
void add_selftest_command(CommandRegistry& registry);
void add_compare_command(CommandRegistry& registry);
void add_report_command(CommandRegistry& registry);
void add_view_command(CommandRegistry& registry);
// `history` and its subcommands: ingest, list, trend, compare, regressions.
void add_history_commands(CommandRegistry& registry);
// The child of `run --load-process`: not listed in --help.
void add_load_process_command(CommandRegistry& registry);

}  // namespace gpuoverlap::commands
