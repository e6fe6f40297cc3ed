// `gpuoverlap run --live` and `run --script`: a run whose scenario is edited while it runs,
// from the viewer's window, from a script, or both.
#include <atomic>
#include <iostream>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "app/commands.h"
#include "app/exit_status.h"
#include "core/input_file.h"
#include "live/live_edits.h"
#include "live/live_script.h"
#include "scenarios/names.h"
#if GPUOVERLAP_HAS_VIEWER
#include "viewer/live_feed.h"
#include "viewer/window.h"
#endif

namespace gpuoverlap::commands {

namespace {

// A run whose scenario can be edited while it runs (`run --live`, `run --script`): its edits,
// its script if any, and the hooks that end a version at a frame boundary and start the next
// (docs/viewer.md, "Changing the experiment").
struct EditSession {
  live::LiveEdits edits;
  std::optional<live::ScriptRunner> script;

  // --script FILE, checked whole before anything runs.
  Status load_script(const std::string& path) {
    auto text = read_input_file(path, 1u << 20);
    if (!text) return text.error();
    auto steps = live::parse_script(*text, path);
    if (!steps) return steps.error();
    script.emplace(std::move(*steps), edits, std::cerr);
    return ok_status();
  }

  // Sets the run's hooks; the run's own on_frame (the live window's feed) still sees every
  // frame, first.
  void attach(RunArguments& args) {
    args.on_scenarios = [this](std::vector<Scenario>& scenarios) -> Status {
      if (scenarios.size() != 1 || !scenarios[0].study.empty() || scenarios[0].preemption) {
        const std::string why =
            "the experiment can be edited when the run is one frame scenario (not a study, a "
            "matrix, a preemption scenario or several scenarios)";
        if (script) return make_error("--script: " + why);
        edits.refuse_all(why);
        return ok_status();
      }
      scenarios[0].live = Scenario::LiveVersion{};
      edits.start(scenarios[0]);
      if (script) script->start();
      return ok_status();
    };
    args.end_requested = [this] { return edits.pending(); };
    args.next_version = [this](const SuiteOutcome& so_far) -> std::vector<Scenario> {
      std::uint64_t frames = 0;
      for (const ScenarioOutcome& s : so_far.scenarios)
        if (s.timeline) frames += s.timeline->frames.size();
      if (auto next = edits.take_next_or_close(frames)) return {std::move(*next)};
      return {};
    };
    args.on_frame = [this, window = args.on_frame](const Scenario& s, const FrameRecord& f,
                                                   std::span<const WorkloadFrameRecord> r) {
      if (window) window(s, f, r);
      if (script) script->frame_measured(s.name);
    };
  }

  // Once the run has ended (on the thread that ran it).
  void finish() {
    edits.close("the run has ended");
    if (script) script->run_ended();
  }
};

}  // namespace

// run --script without --live: the same session, no window.
int command_run_scripted(RunArguments args, const std::string& command_line) {
  EditSession session;
  if (Status loaded = session.load_script(args.live_script); !loaded) return fail(loaded.error());
  session.attach(args);
  const int status = command_run(args, command_line);
  session.finish();
  return status;
}

// run --live: the run on a thread of its own, the viewer's window on this one (GLFW wants the
// main thread). The window takes each measured frame from a LiveFeed; closing it stops the run
// after the current frame. Its controls (and --script) edit the running scenario through an
// EditSession. The run's results are written as without --live.
int command_run_live(RunArguments args, const std::string& command_line) {
#if GPUOVERLAP_HAS_VIEWER
  std::string why;
  if (!viewer::display_available(why))
    return fail(make_error("run --live: no display (" + why +
                           "); the viewer needs one: set DISPLAY, or run under xvfb-run (run "
                           "without --live needs none)"));
  EditSession session;
  if (!args.live_script.empty())
    if (Status loaded = session.load_script(args.live_script); !loaded) return fail(loaded.error());
  viewer::LiveFeed feed;
  std::atomic<bool> window_closed{false};
  args.on_frame = [&feed](const Scenario& s, const FrameRecord& f,
                          std::span<const WorkloadFrameRecord> r) { feed.add_frame(s, f, r); };
  session.attach(args);
  args.stop_requested = [&window_closed] { return window_closed.load(); };
  args.on_device = [&feed](const nlohmann::json& device) { feed.set_device(device); };
  args.on_start = [&feed](const Scenario& s, const nlohmann::json& facts) {
    feed.begin_scenario(s, facts);
  };
  int run_status = kExitEnvironment;
  std::thread runner;
  viewer::ViewOptions options;
  options.live = &feed;
  options.edits = &session.edits;
  // The run starts once the window is open; a window that cannot open runs nothing.
  options.on_window_open = [&] {
    runner = std::thread([&] {
      run_status = command_run(args, command_line);
      session.finish();
      feed.finish(run_status);
    });
  };
  if (!args.live_screenshot.empty()) options.screenshot = args.live_screenshot;
  options.exit_after_frames = args.live_exit_after_frames;
  std::ostringstream messages;
  const int view_status = viewer::run_viewer(options, std::cout, messages);
  window_closed = true;
  const bool ran = runner.joinable();
  if (ran) runner.join();
  std::istringstream lines(messages.str());
  for (std::string line; std::getline(lines, line);)
    std::cerr << escape_control_characters(line) << "\n";
  if (!ran) return view_status != kExitOk ? view_status : kExitEnvironment;
  return run_status != kExitOk ? run_status : view_status;
#else
  (void)args, (void)command_line;
  return fail(
      make_error("run --live: this build has no viewer (Dear ImGui is not packaged for mingw-w64)",
                 ErrorCategory::environment));
#endif
}

}  // namespace gpuoverlap::commands
