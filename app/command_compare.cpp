// `gpuoverlap compare`: a baseline against a candidate; a change beyond the threshold is a
// problem found (exit 1), the CI gate.
#include <iostream>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/compare.h"
#include "app/commands.h"
#include "app/exit_status.h"
#include "core/atomic_file.h"

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

}  // namespace gpuoverlap::commands
