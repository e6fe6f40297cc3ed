#include <algorithm>
#include <set>

#include "scenarios/scenario.h"

namespace gpuoverlap {

std::uint32_t frames_per_round(std::uint32_t total, std::uint32_t rounds) {
  return rounds <= 1 ? total : (total + rounds - 1) / rounds;
}

std::vector<Scenario> expand_study(const StudySpec& study, const Scenario& foreground) {
  std::vector<Scenario> out;
  // A condition this host cannot give what it asks is reported, never run under another
  // setting; checked once, before any round.
  std::vector<std::pair<std::string, std::string>> not_run;
  std::set<std::string> skipped;
  bool fixes_allocator = false;
  for (const ConditionSpec& c : study.conditions)
    if (c.background) {
      if (auto why = background::why_not_here(*c.background)) {
        not_run.emplace_back(c.name, *why);
        skipped.insert(c.name);
      } else if (c.background->allocator == background::Allocator::keep) {
        fixes_allocator = true;
      }
    }
  const std::uint32_t total = study.frames.value_or(foreground.frames);
  for (std::uint32_t round = 1; round <= study.rounds; ++round) {
    std::vector<const ConditionSpec*> order;
    for (const ConditionSpec& c : study.conditions)
      if (!skipped.contains(c.name)) order.push_back(&c);
    if (round % 2 == 0) std::reverse(order.begin(), order.end());
    for (const ConditionSpec* c : order) {
      Scenario s = foreground;
      s.name = study.name + "/" + c->name;
      if (study.rounds > 1) s.name += "/round-" + std::to_string(round);
      s.study = study.name;
      s.condition = c->name;
      s.round = round;
      s.rounds = study.rounds;
      s.study_budget_s = study.rounds > 1 ? study.budget_s : 0;
      s.study_max_rounds = study.max_rounds;
      s.study_round_ms = study.round_ms;
      s.description = study.description + " [condition " + c->name + "; foreground " +
                      foreground.name + ": " + foreground.description + "]";
      s.source = study.source + " (foreground " + foreground.source + ")";
      s.frames = frames_per_round(total, study.rounds);
      if (study.warmup_frames) s.warmup_frames = *study.warmup_frames;
      if (study.foreground_loop_wait && s.cpu) s.cpu->loop_wait = *study.foreground_loop_wait;
      s.background = c->background;
      s.null_control = c->null_control;
      s.negative_control = c->negative_control;
      s.study_not_run = not_run;
      s.study_fixes_allocator = fixes_allocator;
      out.push_back(std::move(s));
    }
  }
  return out;
}

std::vector<Scenario> next_study_round(const std::vector<Scenario>& last_round) {
  std::vector<Scenario> out(last_round.rbegin(), last_round.rend());
  for (Scenario& s : out) {
    s.round += 1;
    s.name = s.study + "/" + s.condition + "/round-" + std::to_string(s.round);
  }
  return out;
}

}  // namespace gpuoverlap
