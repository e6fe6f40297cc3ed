#include "live/live_edits.h"

#include <fmt/format.h>

#include "core/atomic_file.h"
#include "scenarios/scenario_toml.h"

namespace gpuoverlap::live {

void LiveEdits::start(const Scenario& first) {
  std::lock_guard lock(mutex_);
  base_name_ = first.name;
  latest_ = editable(first);
  latest_scenario_ = first;
  started_ = 1;
  why_not_.clear();
}

void LiveEdits::refuse_all(std::string why_not) {
  std::lock_guard lock(mutex_);
  latest_.reset();
  latest_scenario_.reset();
  why_not_ = std::move(why_not);
}

LiveEdits::Outcome LiveEdits::last_outcome() const {
  std::lock_guard lock(mutex_);
  return last_outcome_;
}

std::string LiveEdits::why_not() const {
  std::lock_guard lock(mutex_);
  return why_not_;
}

std::optional<EditableScenario> LiveEdits::latest() const {
  std::lock_guard lock(mutex_);
  return latest_;
}

Status LiveEdits::submit(const Edit& edit) {
  std::lock_guard lock(mutex_);
  if (!why_not_.empty() || !latest_) return make_error(why_not_);
  // A pending edit is merged: the version it will start keeps its number.
  const std::uint32_t version = started_ + 1;
  auto outcome = apply_edit(*latest_, edit, version_name(version));
  last_outcome_ = {describe(edit) + (outcome ? ": accepted, from the next frame boundary"
                                             : ": refused: " + outcome.error().message),
                   !outcome};
  if (!outcome) return outcome.error();
  latest_ = std::move(outcome->draft);
  latest_scenario_ = std::move(outcome->scenario);
  pending_changes_.push_back(describe(edit));
  return ok_status();
}

Status LiveEdits::save_toml(const std::filesystem::path& path) const {
  std::string text;
  {
    std::lock_guard lock(mutex_);
    if (!latest_scenario_) return make_error("there is no scenario to save: " + why_not_);
    text = "# saved from gpuoverlap run --live\n" + to_toml(*latest_scenario_);
  }
  return write_file_atomically(path, text);
}

std::string LiveEdits::version_name(std::uint32_t version) const {
  return version <= 1 ? base_name_ : fmt::format("{}-edit-{}", base_name_, version - 1);
}

std::string LiveEdits::newest_version_name() const {
  std::lock_guard lock(mutex_);
  return version_name(started_);
}

void LiveEdits::end_session() {
  std::lock_guard lock(mutex_);
  if (!why_not_.empty()) return;
  ending_ = true;
  why_not_ = "the run is ending";
}

std::uint32_t LiveEdits::versions_started() const {
  std::lock_guard lock(mutex_);
  return started_;
}

bool LiveEdits::pending() const {
  std::lock_guard lock(mutex_);
  return ending_ || !pending_changes_.empty();
}

std::optional<Scenario> LiveEdits::take_next_or_close(std::uint64_t session_frames) {
  std::lock_guard lock(mutex_);
  if (ending_ || pending_changes_.empty() || !latest_scenario_) {
    pending_changes_.clear();
    if (why_not_.empty()) why_not_ = "the run has ended";
    return std::nullopt;
  }
  Scenario next = *latest_scenario_;
  Scenario::LiveVersion live;
  live.version = ++started_;
  live.previous = version_name(started_ - 1);
  live.changes = std::move(pending_changes_);
  live.first_session_frame = session_frames;
  pending_changes_.clear();
  next.live = live;
  return next;
}

void LiveEdits::close(std::string why) {
  std::lock_guard lock(mutex_);
  // Unless editing was never possible (refuse_all), the end is the reason from now on.
  if (latest_) why_not_ = std::move(why);
  pending_changes_.clear();
  ending_ = false;
}

}  // namespace gpuoverlap::live
