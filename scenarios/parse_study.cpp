#include <algorithm>
#include <set>

#include "scenarios/scenario.h"
#include "scenarios/scenario_grammar.h"

namespace gpuoverlap {

namespace {

class StudyGrammar : public scenario_grammar::FieldReader {
 public:
  using FieldReader::FieldReader;

  Result<StudySpec> parse_study_text(std::string_view text) {
    auto parsed = parse_toml(text);
    if (!parsed) return parsed.error();
    const toml::table& root = *parsed;
    StudySpec study;
    study.source = source_;
    GPUOVERLAP_TRY(
        only_keys(root,
                  {"name", "description", "foreground", "frames", "warmup_frames", "rounds",
                   "budget_s", "max_rounds", "round_ms", "condition", "in_run_all",
                   "foreground_loop_wait"},
                  "the study"));
    auto in_run_all = bool_field(root, "in_run_all", "the study", true);
    if (!in_run_all) return in_run_all.error();
    study.in_run_all = *in_run_all;
    jobs::LoopWait loop_wait = jobs::LoopWait::block;
    GPUOVERLAP_TRY(named_field(
        root, "foreground_loop_wait", "the study", nullptr,
        [](std::string_view text) { return value_of(jobs::kLoopWaitNames, text); },
        names_list(jobs::kLoopWaitNames), loop_wait));
    if (root.get("foreground_loop_wait")) study.foreground_loop_wait = loop_wait;
    auto rounds = int_field(root, "rounds", "the study", 1, 1000, 1);
    if (!rounds) return rounds.error();
    study.rounds = *rounds;
    auto budget =
        number_field(root, "budget_s", "the study", 0, 7 * 24 * 3600.0, kDefaultStudyBudgetS);
    if (!budget) return budget.error();
    study.budget_s = *budget;
    auto max_rounds = int_field(root, "max_rounds", "the study", study.rounds, 1000,
                                std::max(study.rounds, kDefaultStudyMaxRounds));
    if (!max_rounds) return max_rounds.error();
    study.max_rounds = *max_rounds;
    auto round_ms = int_field(root, "round_ms", "the study", 0, kMaxStudyRoundMs, 0);
    if (!round_ms) return round_ms.error();
    study.round_ms = *round_ms;
    auto name = directory_name(root, "name", "the study", nullptr);
    if (!name) return name.error();
    study.name = *name;
    auto description = string_field(root, "description", "the study", false, nullptr);
    if (!description) return description.error();
    study.description = *description;
    auto foreground = string_field(root, "foreground", "the study", true, nullptr);
    if (!foreground) return foreground.error();
    study.foreground = *foreground;
    if (root.get("frames")) {
      auto frames = int_field(root, "frames", "the study", 1, kMaxFrames, kDefaultFrames);
      if (!frames) return frames.error();
      study.frames = *frames;
    }
    if (root.get("warmup_frames")) {
      auto warmup =
          int_field(root, "warmup_frames", "the study", 0, kMaxFrames, kDefaultWarmupFrames);
      if (!warmup) return warmup.error();
      study.warmup_frames = *warmup;
    }
    const toml::array* conditions = root["condition"].as_array();
    if (!conditions || conditions->empty())
      return error_at(root.get("condition"),
                      "a study needs [[condition]] tables (one without [background]: the "
                      "baseline)");
    std::set<std::string> names;
    std::size_t baselines = 0;
    for (const toml::node& node : *conditions) {
      const toml::table* t = node.as_table();
      if (!t) return error_at(&node, "each condition must be a table ([[condition]])");
      GPUOVERLAP_TRY(only_keys(*t, {"name", "background", "control"}, "a condition"));
      auto cname = directory_name(*t, "name", "a condition", &node);
      if (!cname) return cname.error();
      if (!names.insert(*cname).second)
        return error_at(t->get("name"), "two conditions are named '" + *cname + "'");
      ConditionSpec condition{*cname, std::nullopt, false};
      if (const toml::node* control = t->get("control")) {
        const auto* text = control->as_string();
        if (!text || (text->get() != "null" && text->get() != "idle-spinners"))
          return error_at(control,
                          "condition '" + *cname +
                              "': control must be \"null\" (the baseline's settings run as a "
                              "condition of their own, an A/A test) or \"idle-spinners\" (the "
                              "negative control: an idle-priority thread per foreground CPU "
                              "allocating, freeing and touching memory of their own (no system call)); a positive control is a "
                              "[condition.background] with unmanaged_threads");
        if (t->get("background"))
          return error_at(control, "condition '" + *cname + "': a " + std::string(text->get()) +
                                       " control has no [condition.background] (it runs "
                                       "settings of its own)");
        if (text->get() == "null") {
          condition.null_control = true;
        } else {
          background::BackgroundSpec spinners;
          spinners.idle_spinners = true;
          condition.background = spinners;
          condition.negative_control = true;
        }
      } else if (const toml::node* bg = t->get("background")) {
        auto spec = scenario_grammar::parse_background_table(
            *this, *bg, "[condition.background] of '" + *cname + "'", true);
        if (!spec) return spec.error();
        condition.background = *spec;
      } else {
        ++baselines;
      }
      study.conditions.push_back(std::move(condition));
    }
    if (baselines != 1)
      return error_at(conditions,
                      "a study needs exactly one condition without [background] and without "
                      "control = \"null\" (the baseline every other condition is compared "
                      "with); "
                      "this one has " +
                          std::to_string(baselines));
    return study;
  }
};

}  // namespace

bool is_study(std::string_view toml_text) {
  return scenario_grammar::has_top_level_key(toml_text, {"foreground", "condition"});
}

Result<StudySpec> parse_study(std::string_view toml_text, const std::string& source_name) {
  StudyGrammar grammar(source_name);
  return grammar.parse_study_text(toml_text);
}

}  // namespace gpuoverlap
