// `gpuoverlap view`: the viewer on a results folder (or two, A/B).
#include <iostream>
#include <sstream>
#include <string>

#include "app/commands.h"
#include "app/exit_status.h"
#include "scenarios/names.h"
#if GPUOVERLAP_HAS_VIEWER
#include "viewer/window.h"
#endif

namespace gpuoverlap::commands {

int command_view(const ViewArguments& args) {
#if GPUOVERLAP_HAS_VIEWER
  viewer::ViewOptions options;
  // A folder or a history, one of them: each is a whole view of its own.
  if (args.db && !args.results.empty())
    return fail(
        make_error("view: a results folder or --db DB, not both (a run of the history "
                   "opens from the history's window)"));
  if (!args.db && args.results.empty())
    return fail(make_error("view: name a results folder, or a results history with --db DB"));
  if (args.db) {
    if (args.scenario || args.frame || args.clock)
      return fail(make_error(
          "view --db: --scenario, --frame and --clock are for a results folder; the history's "
          "window chooses its series from lists"));
    auto location = history::parse_location(*args.db);
    if (!location) return fail(location.error().with_context("view: "));
    options.history = std::move(*location);
  }
  options.results = args.results;
  if (!args.candidate.empty()) options.candidate = args.candidate;
  options.scenario = args.scenario;
  options.frame = args.frame;
  options.clock = args.clock;
  if (!args.screenshot.empty()) options.screenshot = args.screenshot;
  options.exit_after_frames = args.exit_after_frames;
  options.width_px = args.width_px;
  options.height_px = args.height_px;
  // Its messages quote untrusted names (run.json's, the command line's): escaped, as every
  // other command's.
  std::ostringstream messages;
  const int status = viewer::run_viewer(options, std::cout, messages);
  std::istringstream lines(messages.str());
  for (std::string line; std::getline(lines, line);)
    std::cerr << escape_control_characters(line) << "\n";
  return status;
#else
  (void)args;
  return fail(
      make_error("view: this build has no viewer (Dear ImGui is not packaged for mingw-w64)",
                 ErrorCategory::environment));
#endif
}

}  // namespace gpuoverlap::commands
