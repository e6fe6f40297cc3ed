#include "viewer/window.h"

#define GLFW_INCLUDE_NONE
#include <GL/gl.h>
#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>  // ImGui's own backends (libimgui-dev), not ours
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

#include "viewer/live_feed.h"
#include "viewer/panels.h"
#include "viewer/screenshot_sidecar.h"
#include "viewer/view_state.h"

// The window: what is shown loaded (a results folder, a second one for A/B, or a history) and
// the GLFW/ImGui loop; the panels draw (panels.h), the screenshot's sidecar says what they drew
// (screenshot_sidecar.h).
namespace gpuoverlap::viewer {

namespace {

std::string glfw_error;  // the last GLFW error, for the one line that says why

void on_glfw_error(int, const char* description) { glfw_error = description ? description : "?"; }

// A results folder, checked against what the command line asked to see first.
int load_folder(const ViewOptions& options, ViewState& state, std::ostream& err) {
  auto loaded = load_results(options.results);
  if (!loaded) {
    err << "view: " << loaded.error().message << "\n";
    return 2;
  }
  state.run = std::move(*loaded);
  if (state.run.scenarios.empty()) {
    err << "view: " << options.results.string() << " holds no scenario results\n";
    return 2;
  }
  state.devices.list = run_devices(state.run);
  std::size_t first = 0;
  if (options.scenario) {
    // On several devices, a name without its device folder is the first device's.
    const auto found = find_scenario(state.run, state.devices.list, *options.scenario);
    if (!found) {
      err << "view: no scenario '" << *options.scenario << "' in " << options.results.string()
          << "; it has:";
      for (const LoadedScenario& s : state.run.scenarios) err << " " << s.name;
      err << "\n";
      return 2;
    }
    first = *found;
  }
  select_scenario(state, first, options.clock);
  if (options.clock &&
      std::find(state.clocks.begin(), state.clocks.end(), *options.clock) == state.clocks.end()) {
    err << "view: scenario " << state.run.scenarios[first].name << " has no value on the "
        << to_string(*options.clock) << " clock\n";
    return 2;
  }
  if (options.frame) {
    const auto it = std::find(state.frames.begin(), state.frames.end(), *options.frame);
    if (it == state.frames.end()) {
      err << "view: scenario " << state.run.scenarios[first].name << " has no frame "
          << *options.frame << " (frames " << (state.frames.empty() ? 0 : state.frames.front())
          << " to " << (state.frames.empty() ? 0 : state.frames.back()) << ")\n";
      return 2;
    }
    state.frame_index = static_cast<int>(it - state.frames.begin());
    state.medians = false;
  }
  state.live.follow = false;
  if (options.candidate) {
    auto second = load_results(*options.candidate);
    if (!second) {
      err << "view: " << second.error().message << "\n";
      return 2;
    }
    if (second->scenarios.empty()) {
      err << "view: " << options.candidate->string() << " holds no scenario results\n";
      return 2;
    }
    state.compare = CompareView{*options.candidate, std::move(*second), {}, {}, Clock::poll, {}};
    state.devices.list.clear();  // A/B: one device's scenario against B's
  }
  return 0;
}

// `view --db`: the history read before any window, each run's folder looked at once.
int load_history(const history::Location& location, ViewState& state, std::ostream& err) {
  auto data = read_history(location);
  if (!data) {
    err << "view: " << data.error().message << "\n";
    return data.error().category == ErrorCategory::environment ? 3 : 2;
  }
  HistoryView h;
  h.data = std::move(*data);
  h.runs = runs_scene(h.data);
  for (const MachineRow& row : h.runs.rows) {
    std::vector<bool> present;
    for (const RunMark& mark : row.marks) {
      std::error_code ec;
      present.push_back(std::filesystem::is_directory(mark.directory, ec));
    }
    h.present.push_back(std::move(present));
  }
  h.choice = default_choice(h.data.series);
  choose_series(h);
  state.history = std::move(h);
  return 0;
}

// A run's folder clicked in the history: shown as `view RESULTS_DIR` shows it, the history
// kept for "back to the history". A folder that cannot be read leaves the history shown,
// saying why.
void open_from_history(ViewState& state, const std::filesystem::path& folder) {
  ViewOptions options;
  options.results = folder;
  ViewState opened;
  std::ostringstream why;
  if (load_folder(options, opened, why) != 0) {
    std::string text = why.str();
    while (!text.empty() && text.back() == '\n') text.pop_back();
    state.history->message = text;
    return;
  }
  opened.history = std::move(state.history);
  opened.history->shown = false;
  opened.history->message.clear();
  state = std::move(opened);
  rebuild(state);
}

}  // namespace

bool display_available(std::string& why) {
  glfwSetErrorCallback(on_glfw_error);
  if (!glfwInit()) {
    why = glfw_error;
    return false;
  }
  // GLFW stays initialised for run_viewer (glfwInit again is a no-op). Closing the connection
  // here would let an X server reset when its last client leaves (Xvfb does), and the window
  // opened next could find no display while it resets.
  return true;
}

int run_viewer(const ViewOptions& options, std::ostream& out, std::ostream& err) {
  ViewState state;
  if (options.history) {
    if (const int status = load_history(*options.history, state, err); status != 0) return status;
  } else if (!options.live) {
    if (const int status = load_folder(options, state, err); status != 0) return status;
  }

  glfwSetErrorCallback(on_glfw_error);
  if (!glfwInit()) {
    err << "view: no display (" << glfw_error
        << "); the viewer needs one: set DISPLAY, or run under xvfb-run\n";
    return 2;
  }
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 0);
  const std::string title = options.live      ? std::string("gpuoverlap run --live")
                            : options.history ? "gpuoverlap view --db " + options.history->shown
                                              : "gpuoverlap view " + options.results.string();
  GLFWwindow* window =
      glfwCreateWindow(options.width_px, options.height_px, title.c_str(), nullptr, nullptr);
  if (!window) {
    err << "view: no OpenGL 3 window (" << glfw_error << ")\n";
    glfwTerminate();
    return 2;
  }
  glfwMakeContextCurrent(window);
  glfwSwapInterval(1);
  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGui::GetIO().IniFilename = nullptr;  // no imgui.ini left in the working directory
  // A screenshot shows the data, not a tooltip under wherever the pointer happens to be.
  if (options.screenshot) ImGui::GetIO().ConfigFlags |= ImGuiConfigFlags_NoMouse;
  ImGui::StyleColorsDark();
  ImGui_ImplGlfw_InitForOpenGL(window, true);
  ImGui_ImplOpenGL3_Init("#version 130");

  if (!state.run.scenarios.empty()) rebuild(state);
  if (options.on_window_open) options.on_window_open();
  std::uint64_t live_version = 0;
  // Live with a screenshot: frames rendered since the run ended (it is taken after).
  std::uint32_t rendered_after_end = 0;
  const std::uint32_t frames_before_shot =
      options.exit_after_frames ? options.exit_after_frames : 3;
  int status = 0;
  for (std::uint32_t rendered = 1; !glfwWindowShouldClose(window); ++rendered) {
    glfwPollEvents();
    if (options.live) {
      const bool ended = options.live->finished();  // before the snapshot: it then has it all
      take_snapshot(state, *options.live, live_version, options.clock);
      if (ended) ++rendered_after_end;
    }
    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    ImGui::NewFrame();
    const bool history_shown = state.history && state.history->shown;
    layout::TimelineLayout drawn;
    if (history_shown)
      draw_history(*state.history);
    else
      drawn = draw_ui(state, options.edits);
    ImGui::Render();
    int width = 0, height = 0;
    glfwGetFramebufferSize(window, &width, &height);
    glViewport(0, 0, width, height);
    glClearColor(0.08f, 0.08f, 0.09f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    const bool ready =
        options.live ? rendered_after_end >= frames_before_shot : rendered >= frames_before_shot;
    if (options.screenshot && ready) {
      if (!history_shown && state.run.scenarios.empty()) {
        err << "view: the run measured no frame to show\n";
        status = 3;
        break;
      }
      // The sidecar says what was drawn where: the history's window or a run's.
      const nlohmann::json sidecar = history_shown ? history_json(*state.history, width, height)
                                                   : layout_json(state, drawn, width, height);
      if (Status s = write_screenshot(*options.screenshot, sidecar, width, height); !s) {
        err << "view: " << s.error().message << "\n";
        status = 3;
      } else {
        out << "screenshot: " << options.screenshot->string() << " (" << width << "x" << height
            << ")\n";
      }
      break;
    }
    glfwSwapBuffers(window);
    // A run clicked in the history: its folder from the next frame on.
    if (state.history && state.history->open_pending) {
      const std::filesystem::path folder = *state.history->open_pending;
      state.history->open_pending.reset();
      open_from_history(state, folder);
    }
  }
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(window);
  glfwTerminate();
  return status;
}

}  // namespace gpuoverlap::viewer
