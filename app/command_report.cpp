// `gpuoverlap report`: a results folder as Markdown, the page and its details beside it.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "analysis/devices_report.h"
#include "analysis/report.h"
#include "app/command_registry.h"
#include "app/commands.h"
#include "app/exit_status.h"
#include "core/atomic_file.h"

namespace gpuoverlap::commands {

namespace {

int report_devices(const std::filesystem::path& root, const std::vector<DeviceFolder>& folders,
                   const std::filesystem::path& target, const std::filesystem::path& details_target,
                   bool to_stdout) {
  std::vector<DeviceResults> devices;
  std::string details = "# gpuoverlap report: the devices' details\n\n";
  for (const DeviceFolder& each : folders) {
    auto run = load_results(each.directory);
    if (!run) return fail(run.error());
    const std::string folder = each.directory.lexically_relative(root).generic_string();
    if (!to_stdout) {
      const ReportPages pages = markdown_report(*run);
      if (Status s = write_file_atomically(each.directory / "report-details.md", pages.details); !s)
        return fail(s.error());
      if (Status s = write_file_atomically(each.directory / "report.md", pages.page); !s)
        return fail(s.error());
    }
    details += fmt::format("- [{0}/report-details.md]({0}/report-details.md)\n", folder);
    devices.push_back({folder, each.device, std::move(*run)});
  }
  const std::string page = devices_report(devices);
  if (to_stdout) {
    std::cout << page;
    return kExitOk;
  }
  if (Status s = write_file_atomically(details_target, details); !s) return fail(s.error());
  if (Status s = write_file_atomically(target, page); !s) return fail(s.error());
  std::cout << target.string() << "\n" << details_target.string() << "\n";
  for (const DeviceResults& d : devices)
    std::cout << (root / d.folder / "report.md").string() << "\n"
              << (root / d.folder / "report-details.md").string() << "\n";
  return kExitOk;
}

}  // namespace

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
  // A run on several devices: each device's folder gets its own report, and the run's folder
  // one page with the devices side by side.
  auto devices = device_folders(results_dir);
  if (!devices) return fail(devices.error());
  if (!devices->empty())
    return report_devices(results_dir, *devices, target, details_target, out_path == "-");
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

void add_report_command(CommandRegistry& registry) {
  struct ReportArguments {
    std::string dir, out;
  };
  auto args = std::make_shared<ReportArguments>();
  auto* report =
      registry.app.add_subcommand("report",
                                  "Write RESULTS_DIR/report.md (the five answers, then one "
                                  "table per study, preemption matrix, barrier family and "
                                  "the other scenarios) and report-details.md (every "
                                  "scenario: queues, timing tables, gaps, plots, traces)");
  report->add_option("results", args->dir, "Results directory written by gpuoverlap run")
      ->required();
  report->add_option(
      "--out", args->out,
      "Write the report here instead, the details beside it as <name>-details.md ('-': "
      "both to standard output)");
  registry.add(report, [args] { return command_report(args->dir, args->out); });
}

}  // namespace gpuoverlap::commands
