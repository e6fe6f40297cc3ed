// `gpuoverlap view`: the viewer on a results folder (or two, A/B).
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include "app/command_registry.h"
#include "app/commands.h"
#include "app/exit_status.h"
#include "core/enum_names.h"
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

namespace {

// view's options as parsed; the ones given (their Option counted) override the viewer's defaults.
struct ViewOptions {
  std::string dir, scenario, clock, screenshot, candidate, db;
  std::uint32_t frame = 0, exit_after = 0;
  int width = 1400, height = 860;
  CLI::Option *scenario_option = nullptr, *frame_option = nullptr, *clock_option = nullptr,
              *db_option = nullptr;
};

int run_view(const ViewOptions& o) {
  ViewArguments view_args;
  view_args.results = o.dir;
  view_args.candidate = o.candidate;
  if (o.db_option->count() > 0) view_args.db = o.db;
  view_args.screenshot = o.screenshot;
  view_args.exit_after_frames = o.exit_after;
  view_args.width_px = o.width;
  view_args.height_px = o.height;
  if (o.scenario_option->count() > 0) view_args.scenario = o.scenario;
  if (o.frame_option->count() > 0) view_args.frame = o.frame;
  if (o.clock_option->count() > 0) view_args.clock = value_of(kClockNames, o.clock);
  return command_view(view_args);
}

}  // namespace

void add_view_command(CommandRegistry& registry) {
  auto args = std::make_shared<ViewOptions>();
  auto* view = registry.app.add_subcommand(
      "view",
      "Open the Dear ImGui viewer on a results folder: every frame of every scenario as a "
      "timeline per queue (bars, p5-p95 whiskers, dependency arrows), the frame-time history, "
      "the dependency gaps, the device and queue priorities; or, with --db, a results "
      "history: the runs per machine on a time axis and a series' trend with its change points "
      "(click a run to open its folder). Needs a display (xvfb-run works)");
  view->add_option("results", args->dir, "Results directory written by gpuoverlap run");
  view->add_option("candidate", args->candidate,
                   "A second results directory: shown below the first (A/B), with compare's "
                   "table for the scenario shown");
  args->scenario_option = view->add_option("--scenario", args->scenario,
                                           "The scenario shown first (its run.json name)");
  args->frame_option = view->add_option(
      "--frame", args->frame, "The frame shown first (default: the medians over all frames)");
  args->clock_option =
      view->add_option("--clock", args->clock,
                       "The clock shown first: poll, ts or clk (default: ts where recorded)")
          ->check(CLI::IsMember(all_names(kClockNames)));
  args->db_option = view->add_option(
      "--db", args->db,
      "Show this results history instead of a folder: a SQLite file or postgresql://... "
      "(docs/history.md, \"In the viewer\")");
  view->add_option("--screenshot", args->screenshot,
                   "Render, write the window to this PNG (and FILE.layout.json: what was drawn "
                   "where) and exit");
  view->add_option("--exit-after-frames", args->exit_after,
                   "With --screenshot: frames rendered before it is taken (default 3)")
      ->check(CLI::Range(1u, 100000u));
  view->add_option("--size", args->width, "Window width in pixels (default 1400)")
      ->check(CLI::Range(400, 8192));
  view->add_option("--height", args->height, "Window height in pixels (default 860)")
      ->check(CLI::Range(300, 8192));
  registry.add(view, [args] { return run_view(*args); });
}

}  // namespace gpuoverlap::commands
