// The viewer's window: GLFW, OpenGL 3 and Dear ImGui (Debian's libimgui-dev, whose libimgui.a
// carries the GLFW and OpenGL 3 backends). A thin layer: what it shows comes from scene.h and
// layout/timeline_layout.h; this file only draws it and turns input into view changes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "analysis/results.h"
#include "history/history_store.h"

namespace gpuoverlap::live {
class LiveEdits;
}

namespace gpuoverlap::viewer {

class LiveFeed;

struct ViewOptions {
  std::filesystem::path results;  // a results folder (with run.json) or one scenario's folder
  // `view --db DB`: a results history instead of `results` (unused then): the runs per machine
  // and a series' trend (history_scene.h); clicking a run opens its folder as `results` would.
  std::optional<history::Location> history;
  // A/B: a second folder, shown below the first (the same scenario, frame and time range) with
  // `compare`'s table for the scenario shown.
  std::optional<std::filesystem::path> candidate;
  std::optional<std::string> scenario;  // the scenario shown first; default: the first
  std::optional<std::uint32_t> frame;   // the frame shown first; default: the medians
  std::optional<Clock> clock;           // default: ts where the scenario has it, else poll
  int width_px = 1400, height_px = 860;
  // Render this many frames, write the window to a PNG (and, beside it, FILE.layout.json: the
  // bars, lanes and arrows drawn, in the PNG's pixels) and exit.
  std::optional<std::filesystem::path> screenshot;
  std::uint32_t exit_after_frames = 0;  // with screenshot: frames rendered first (default 3)
  // `run --live`: the frames come from this feed as the run measures them, not from
  // `results` (unused then). With a screenshot, it is taken after the run has ended.
  const LiveFeed* live = nullptr;
  // Called once the window and its OpenGL context exist, before the first frame is drawn:
  // `run --live` starts the run here, so that the GL driver is set up before the run's thread
  // sets up the GPU API (on Mesa both load the same LLVM).
  std::function<void()> on_window_open;
  // `run --live`: the edits the window's "experiment" controls make to the running scenario
  // (docs/viewer.md, "Changing the experiment"). nullptr: no controls.
  live::LiveEdits* edits = nullptr;
};

// Whether a window can be opened; `why` says why not. For `run --live`, before the run starts.
// It leaves GLFW initialised for run_viewer, which terminates it.
bool display_available(std::string& why);

// The exit status, as the command line's: 0; 2 when the results, the scenario, the frame or
// the clock asked for cannot be used, the history is not there, or there is no display (one
// line says so); 3 when the history cannot be read (an unreachable server) or the screenshot
// cannot be written.
int run_viewer(const ViewOptions& options, std::ostream& out, std::ostream& err);

}  // namespace gpuoverlap::viewer
