// The edits of a `run --live` or `run --script` session, handed from the viewer's window (its
// controls) or a script (live_script.h) to the run's thread: the counterpart of LiveFeed, which
// hands frames the other way. Each edit is checked when it is made (scenarios/scenario_edit.h: the
// rules of `validate`); an accepted one waits here until the run reaches a frame boundary
// (RunSettings::end_requested sees it pending), and the run then measures the next version of the
// scenario, named
// "<first>-edit-<n>". Edits made before the run takes them are merged into one version.
// Thread-safe: every method may be called from either thread.
#pragma once

#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "scenarios/scenario_edit.h"

namespace gpuoverlap::live {

class LiveEdits {
 public:
  // Editing needs one frame scenario (not a study, matrix or preemption scenario): `why_not`
  // says so for the window when `first` is not; edits are then refused with it.
  void start(const Scenario& first);
  void refuse_all(std::string why_not);

  // The window: whether edits can be made now, and if not why ("" when they can).
  std::string why_not() const;
  // The scenario as the latest accepted edit left it (all workloads, disabled ones too): what
  // the controls show. nullopt before start or when editing is refused.
  std::optional<EditableScenario> latest() const;
  // The window or a script: checks `edit` against the latest accepted version; accepted, it
  // is pending until the run takes it. The refusal says the rule.
  Status submit(const Edit& edit);
  // What became of the last edit submitted ("" before any): its words and "accepted ..." or
  // "refused: <rule>", for the window, whichever made it.
  struct Outcome {
    std::string text;
    bool refused = false;
  };
  Outcome last_outcome() const;
  // The window: writes the latest accepted scenario (the enabled workloads, as a file that
  // `validate` accepts) to `path`, atomically.
  Status save_toml(const std::filesystem::path& path) const;
  // Versions the run started so far, the first included, and the name of the newest.
  std::uint32_t versions_started() const;
  std::string newest_version_name() const;
  // The window ("end the run here", a script's `end`): the version running ends at the next
  // frame boundary as complete, as for an edit, and no version follows.
  void end_session();

  // The run's thread: whether an accepted edit or the end waits (the version should end).
  bool pending() const;
  // The run's thread, when the current version's frames are done or it ended for an edit:
  // the next version (its first measured frame is the session's `session_frames`-th), or
  // nullopt, and then the session is over and later edits are refused.
  std::optional<Scenario> take_next_or_close(std::uint64_t session_frames);
  // The run's thread: the session ended (for any reason); later edits are refused.
  void close(std::string why);

 private:
  mutable std::mutex mutex_;
  std::string why_not_ = "the run has not started yet";
  std::string base_name_;
  std::optional<EditableScenario> latest_;
  std::optional<Scenario> latest_scenario_;  // the runnable form of latest_
  std::vector<std::string> pending_changes_;
  std::uint32_t started_ = 0;  // versions the run took
  bool ending_ = false;        // end_session
  Outcome last_outcome_;
  std::string version_name(std::uint32_t version) const;  // under mutex_
};

}  // namespace gpuoverlap::live
