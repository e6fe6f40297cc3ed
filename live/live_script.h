// `run --script FILE` (with or without --live): the viewer's experiment controls as lines of
// text, made on the session's LiveEdits as the controls make them, so that a session can be
// repeated, run on a machine without a display, and tested (the effects are in the written
// records). Checked whole before anything runs.
//
//   # a comment; blank lines are ignored
//   wait N          until N frames of the scenario as the edits before this line left it have
//                   been measured (frames of a version an edit is ending do not count), or the
//                   run has ended
//   EDIT            an edit of scenarios/scenario_edit.h, e.g. iterations "Compute B" 2; edits
//                   on consecutive lines take effect together, in one version
//   save FILE.toml  "save as TOML": the scenario as the edits so far left it
//   end             "end the run here": the version running ends at the next frame boundary
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "live/live_edits.h"
#include "scenarios/scenario_edit.h"

namespace gpuoverlap::live {

struct ScriptStep {
  enum class Kind { wait, edit, save, end };
  Kind kind = Kind::wait;
  std::size_t line = 0;      // in the file, from 1
  std::uint32_t frames = 0;  // wait
  std::string text;          // edit: its words (parsed again with the scenario's default
                             // barrier when run); save: the file
};

// `source_name` names the file in messages ("<source>:<line>: <reason>").
Result<std::vector<ScriptStep>> parse_script(std::string_view text, const std::string& source_name);

// Runs a script's steps on the run's thread, between frames, so that `wait N` counts exactly
// N measured frames whatever the machine's load. Each step's outcome is one line to `log`
// ("script line 5: depend ...: refused: <rule>"). Contract: every method is called from the
// thread running the scenarios, and `edits` outlives the runner.
class ScriptRunner {
 public:
  ScriptRunner(std::vector<ScriptStep> steps, LiveEdits& edits, std::ostream& log);
  // Once the session's edits have started (LiveEdits::start): the steps before the first
  // wait (edits there take effect after the first measured frame).
  void start();
  // After each measured frame of the scenario named `scenario`.
  void frame_measured(const std::string& scenario);
  // Once the run has ended (after LiveEdits::close): the steps left, each saying what became
  // of it (a wait that will never be met, an edit refused because the run has ended, a save).
  void run_ended();
  bool done() const { return next_ == steps_.size(); }

 private:
  void advance();  // runs steps until a wait that is not met yet

  std::vector<ScriptStep> steps_;
  LiveEdits& edits_;
  std::ostream& log_;
  std::size_t next_ = 0;
  std::uint32_t waited_frames_ = 0;  // frames that count for the current wait
  bool ended_ = false;
};

}  // namespace gpuoverlap::live
