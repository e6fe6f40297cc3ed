// `gpuoverlap compare`: a baseline against a candidate; a change beyond the threshold is a
// problem found (exit 1), the CI gate.
#include <iostream>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/compare.h"
#include "app/command_registry.h"
#include "app/commands.h"
#include "app/exit_status.h"
#include "core/atomic_file.h"
#include "core/enum_names.h"

namespace gpuoverlap::commands {

int command_compare(const std::vector<std::string>& baseline_dirs,
                    const std::vector<std::string>& candidate_dirs, const CompareOptions& options,
                    const std::string& csv_path) {
  if (baseline_dirs.empty() || candidate_dirs.empty())
    return fail(
        make_error("compare needs a baseline and a candidate: BASELINE CANDIDATE, or --baseline "
                   "DIR... --candidate DIR..."));
  if (!csv_path.empty() && csv_path != "-")
    if (Status usable = check_output_file(csv_path); !usable)
      return fail(make_error("--csv " + usable.error().message + " ('-' is standard output)",
                             usable.error().category));
  std::vector<LoadedRun> baseline, candidate;
  for (const auto& [dirs, side, into] : {std::tuple{&baseline_dirs, "baseline", &baseline},
                                         std::tuple{&candidate_dirs, "candidate", &candidate}})
    for (const std::string& dir : *dirs) {
      auto loaded = load_results(dir);
      if (!loaded) return fail(loaded.error().with_context(std::string(side) + ": "));
      into->push_back(std::move(*loaded));
    }
  const CompareResult result = compare_runs(baseline, candidate, options);
  std::cout << compare_table(result, options);
  if (csv_path == "-")
    std::cout << compare_csv(result);
  else if (!csv_path.empty())
    if (Status s = write_file_atomically(csv_path, compare_csv(result)); !s) return fail(s.error());
  if (result.rows.empty() && result.unmatched.empty())
    return fail(make_error("nothing to compare (no ok frames in the baseline)"));
  if (!result.unmatched.empty())
    return problem_found("the candidate lacks what the baseline measured (see above)");
  if (result.changed) return problem_found("changes beyond the threshold (see CHANGED above)");
  return kExitOk;
}

namespace {

// compare's options as parsed: the positional pair, the runs of each side, and the history.
struct CompareArguments {
  std::vector<std::string> baseline_dirs, candidate_dirs;
  std::string baseline_dir, candidate_dir, csv_path, clock = "poll";
  CompareOptions options;
  double threshold_pct = 0;
  CLI::Option* threshold_option = nullptr;  // given: threshold_pct overrides the default
  bool against_history = false;
  HistoryArguments history;
};

int run_compare(CompareArguments& args) {
  if (args.against_history) {
    if (args.baseline_dir.empty() || !args.candidate_dir.empty() || !args.baseline_dirs.empty() ||
        !args.candidate_dirs.empty())
      return fail(make_error("compare --against-history: name one results folder, alone"));
    args.history.results = {args.baseline_dir};
    if (args.threshold_option->count() > 0) args.history.threshold_pct = args.threshold_pct;
    return command_history_compare(args.history);
  }
  // CLI11 has checked the name against the same table.
  args.options.clock = value_of(kClockNames, args.clock).value_or(Clock::poll);
  if (args.threshold_option->count() > 0) args.options.threshold_pct = args.threshold_pct;
  // The positional pair is shorthand for one run per side; both forms add up.
  if (!args.baseline_dir.empty())
    args.baseline_dirs.insert(args.baseline_dirs.begin(), args.baseline_dir);
  if (!args.candidate_dir.empty())
    args.candidate_dirs.insert(args.candidate_dirs.begin(), args.candidate_dir);
  return command_compare(args.baseline_dirs, args.candidate_dirs, args.options, args.csv_path);
}

}  // namespace

void add_compare_command(CommandRegistry& registry) {
  auto args = std::make_shared<CompareArguments>();
  auto* compare = registry.app.add_subcommand(
      "compare",
      "Compare a baseline and a candidate; exit 1 when a change beyond the threshold is real: a "
      "CI gate. With several runs per side (--baseline/--candidate) the runs are the unit and "
      "run-to-run variation cannot raise an alarm; with one run per side only frame-to-frame "
      "noise is accounted for");
  compare->add_option("baseline", args->baseline_dir, "Results directory of the baseline run");
  compare->add_option("candidate", args->candidate_dir, "Results directory of the candidate run");
  compare
      ->add_option("--baseline", args->baseline_dirs,
                   "Results directories of baseline runs (several: the runs method; 5 per side, "
                   "interleaved with the candidate's, recommended)")
      ->expected(1, -1);
  compare->add_option("--candidate", args->candidate_dirs, "Results directories of candidate runs")
      ->expected(1, -1);
  args->threshold_option =
      compare
          ->add_option("--threshold-pct", args->threshold_pct,
                       "Smallest relative change of a p50 or p95 that fails (default 10 with one "
                       "run per side, 5 with several)")
          ->check(CLI::Range(0.0, 1000.0));
  compare
      ->add_option("--min-change-us", args->options.min_change_us,
                   "Smallest absolute change that fails, in µs (default 1)")
      ->check(CLI::Range(0.0, 1e9));
  compare
      ->add_option("--min-change-share-pct", args->options.min_change_share_pct,
                   "Smallest change of a share of frames (late, stutters) that fails, in "
                   "percentage points (default 1)")
      ->check(CLI::Range(0.0, 100.0));
  compare
      ->add_option("--clock", args->clock,
                   "Clock to compare: poll (default), ts or clk (shader clock)")
      ->check(CLI::IsMember(all_names(kClockNames)));
  compare->add_option("--csv", args->csv_path,
                      "Also write the comparison as CSV to this file ('-': standard output)");
  compare->add_flag("--against-history", args->against_history,
                    "Judge one results folder (the positional) against the last --last runs of "
                    "its machine in the results history (--db; docs/history.md)");
  compare->add_option("--db", args->history.db,
                      "With --against-history: the history (default: $GPUOVERLAP_DB)");
  compare
      ->add_option("--last", args->history.last,
                   "With --against-history: how many of the machine's runs (default 10)")
      ->check(CLI::Range(std::size_t{3}, std::size_t{100000}));
  registry.add(compare, [args] { return run_compare(*args); });
}

}  // namespace gpuoverlap::commands
