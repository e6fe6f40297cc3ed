// A `run --live --script FILE`: the viewer's controls as lines of text, run by the window as
// if a user clicked them, so that a live session can be reproduced and tested (the effects
// are in the written records). Checked whole before anything runs. Pure.
//
//   # a comment; blank lines are ignored
//   wait N          until the newest version of the scenario has measured N frames (after the
//                   edits before this line took effect), or the run has ended
//   EDIT            an edit of scenarios/scenario_edit.h, e.g. iterations "Compute B" 2; edits
//                   on consecutive lines take effect together, in one version
//   save FILE.toml  "save as TOML": the scenario as the edits so far left it
//   end             "end the run here": the version running ends at the next frame boundary
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "scenarios/scenario_edit.h"

namespace gpuoverlap::viewer {

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

}  // namespace gpuoverlap::viewer
