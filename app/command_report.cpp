// `gpuoverlap report`: a results folder as Markdown, the page and its details beside it.
#include <filesystem>
#include <iostream>
#include <string>

#include "analysis/report.h"
#include "app/commands.h"
#include "app/exit_status.h"
#include "core/atomic_file.h"

namespace gpuoverlap::commands {

int command_report(const std::string& results_dir, const std::string& out_path) {
  const std::filesystem::path target = out_path.empty()
                                           ? std::filesystem::path(results_dir) / "report.md"
                                           : std::filesystem::path(out_path);
  // The details page sits beside the page: report.md -> report-details.md.
  const std::filesystem::path details_target =
      target.parent_path() / (target.stem().string() + "-details" +
                              (target.has_extension() ? target.extension().string() : ".md"));
  if (out_path != "-")
    for (const std::filesystem::path& path : {target, details_target})
      if (Status usable = check_output_file(path); !usable)
        return fail(make_error(usable.error().message + " ('--out -' is standard output)",
                               usable.error().category));
  auto run = load_results(results_dir);
  if (!run) return fail(run.error());
  if (out_path == "-") {
    const ReportPages pages = markdown_report(*run);
    std::cout << pages.page << "\n---\n\n" << pages.details;
    return kExitOk;
  }
  const ReportPages pages = markdown_report(*run, details_target.filename().string());
  // The details first: the page links to them.
  if (Status s = write_file_atomically(details_target, pages.details); !s) return fail(s.error());
  if (Status s = write_file_atomically(target, pages.page); !s) return fail(s.error());
  std::cout << target.string() << "\n" << details_target.string() << "\n";
  return kExitOk;
}

}  // namespace gpuoverlap::commands
