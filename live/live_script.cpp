#include "live/live_script.h"

#include <charconv>
#include <sstream>

#include "scenarios/names.h"

namespace gpuoverlap::live {

namespace {

std::string_view trimmed(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r");
  return text.substr(first, last - first + 1);
}

}  // namespace

Result<std::vector<ScriptStep>> parse_script(std::string_view text,
                                             const std::string& source_name) {
  std::vector<ScriptStep> steps;
  std::size_t number = 0;
  while (!text.empty()) {
    const auto end = text.find('\n');
    std::string_view line = trimmed(text.substr(0, end));
    text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
    ++number;
    if (line.empty() || line.front() == '#') continue;
    auto fail = [&](const std::string& reason) {
      return make_error(
          escape_control_characters(source_name + ":" + std::to_string(number) + ": " + reason));
    };
    ScriptStep step;
    step.line = number;
    const std::string_view verb = line.substr(0, line.find_first_of(" \t"));
    const std::string_view rest = trimmed(line.substr(verb.size()));
    if (verb == "wait") {
      step.kind = ScriptStep::Kind::wait;
      const auto [at, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), step.frames);
      if (ec != std::errc() || at != rest.data() + rest.size() || step.frames == 0)
        return fail("'wait' takes a number of frames of 1 or more, not '" + std::string(rest) +
                    "'");
    } else if (verb == "save") {
      step.kind = ScriptStep::Kind::save;
      if (rest.empty()) return fail("'save' takes the file to write");
      step.text = std::string(rest);
    } else if (verb == "end") {
      step.kind = ScriptStep::Kind::end;
      if (!rest.empty()) return fail("'end' takes nothing");
    } else {
      step.kind = ScriptStep::Kind::edit;
      if (auto edit = parse_edit(line); !edit)
        return fail(edit.error().message + " (a script line is wait N, save FILE, end or an edit)");
      step.text = std::string(line);
    }
    steps.push_back(std::move(step));
  }
  return steps;
}

ScriptRunner::ScriptRunner(std::vector<ScriptStep> steps, LiveEdits& edits, std::ostream& log)
    : steps_(std::move(steps)), edits_(edits), log_(log) {}

void ScriptRunner::start() { advance(); }

void ScriptRunner::frame_measured(const std::string& scenario) {
  if (done()) return;
  if (steps_[next_].kind == ScriptStep::Kind::wait && !edits_.pending() &&
      scenario == edits_.newest_version_name())
    ++waited_frames_;
  advance();
}

void ScriptRunner::run_ended() {
  ended_ = true;
  advance();
}

void ScriptRunner::advance() {
  while (!done()) {
    const ScriptStep& step = steps_[next_];
    const std::string where = "script line " + std::to_string(step.line) + ": ";
    std::ostringstream line;  // the step's outcome, escaped as a whole: its text is input
    switch (step.kind) {
      case ScriptStep::Kind::wait:
        if (ended_) {
          line << where << "the run ended before " << step.frames << " more frames";
          break;
        }
        if (waited_frames_ < step.frames) return;
        break;
      case ScriptStep::Kind::edit: {
        const std::optional<EditableScenario> latest = edits_.latest();
        auto edit =
            parse_edit(step.text, latest ? latest->scenario.default_barrier : BarrierKind::legacy);
        const Status outcome = edit ? edits_.submit(*edit) : Status(edit.error());
        line << where << step.text << ": "
             << (outcome ? std::string("accepted") : "refused: " + outcome.error().message);
        break;
      }
      case ScriptStep::Kind::save: {
        const Status saved = edits_.save_toml(step.text);
        line << where << (saved ? "saved " + step.text : "not saved: " + saved.error().message);
        break;
      }
      case ScriptStep::Kind::end:
        edits_.end_session();
        line << where << "end";
        break;
    }
    if (!line.str().empty()) log_ << escape_control_characters(line.str()) << "\n" << std::flush;
    ++next_;
    waited_frames_ = 0;
  }
}

}  // namespace gpuoverlap::live
