// `gpuoverlap host`: what this machine gives the background runtime before any GPU work: its
// CPUs and SMT topology (and whether a hypervisor may hide it), what the OS does with each
// scheduling policy of this OS (applied on a thread of its own and read back, or refused),
// and which conditions of a study of policies this host runs and why not the others.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "app/command_registry.h"
#include "app/command_support.h"
#include "app/commands.h"
#include "app/exit_status.h"
#include "core/thread_policy.h"
#include "scenarios/presets.h"

namespace gpuoverlap::commands {

int command_host(const std::string& study, bool as_json) {
  const nlohmann::json host = host_description();
  nlohmann::json policies = nlohmann::json::array();
  for (ThreadPolicy policy : thread_policies_here()) {
    const PolicyProbe probe = probe_policy(policy);
    policies.push_back(
        {{"policy", to_string(policy)},
         {"result", probe.refused ? "refused" : "set"},
         {"refused", probe.refused ? nlohmann::json(*probe.refused) : nlohmann::json(nullptr)},
         {"read_back", probe.read_back}});
  }
  auto expanded = resolve_scenarios(study);
  if (!expanded) return fail(expanded.error());
  if (expanded->empty() || expanded->front().study.empty())
    return fail(make_error("host --study " + study + ": not a study (gpuoverlap list names them)",
                           ErrorCategory::input));
  std::vector<std::string> conditions;
  std::set<std::string> seen;
  for (const Scenario& s : *expanded)
    if (seen.insert(s.condition).second) conditions.push_back(s.condition);
  nlohmann::json not_run = nlohmann::json::array();
  for (const auto& [condition, why] : expanded->front().study_not_run)
    not_run.push_back({{"condition", condition}, {"why", why}});
  const std::size_t runs = conditions.size();  // the conditions not run are not expanded
  if (as_json) {
    std::cout << nlohmann::json{{"host", host},
                                {"policies", policies},
                                {"study",
                                 {{"name", expanded->front().study},
                                  {"runs_here", conditions},
                                  {"not_run", not_run}}}}
                     .dump(2)
              << "\n";
    return kExitOk;
  }
  std::cout << fmt::format(
      "host: {}, {} ({}), {}, {} CPUs usable of {}\n", host["hostname"].get<std::string>(),
      host["kernel"].get<std::string>(), host["machine"].get<std::string>(),
      host["cpu_model"].get<std::string>().empty() ? std::string("CPU model not reported")
                                                   : host["cpu_model"].get<std::string>(),
      host["usable_cpus"].get<std::uint32_t>(), host["logical_cpus"].get<std::uint32_t>());
  const nlohmann::json& scheduler = host["scheduler"];
  std::cout << fmt::format(
      "scheduler: {} ({}), HZ {}, preemption {} ({}), base slice {}\n",
      scheduler["name"].get<std::string>(), scheduler["source"].get<std::string>(),
      host["tick_hz"].is_null() ? std::string("not known") : host["tick_hz"].dump(),
      host["preemption"]["model"].get<std::string>(),
      host["preemption"]["source"].get<std::string>(),
      scheduler["base_slice_ns"].is_null()
          ? scheduler["base_slice_source"].get<std::string>()
          : fmt::format("{} ns ({})", scheduler["base_slice_ns"].get<std::int64_t>(),
                        scheduler["base_slice_source"].get<std::string>()));
  const nlohmann::json& smt = host["smt"];
  if (smt["cores"].is_null()) {
    std::cout << "SMT: not known (" << smt["source"].get<std::string>() << ")\n";
  } else {
    std::cout << fmt::format(
        "SMT: {} cores, {}", smt["cores"].get<std::size_t>(),
        smt["shows_smt"].get<bool>()
            ? fmt::format("siblings {}",
                          fmt::join(smt["sibling_groups"].get<std::vector<std::string>>(), " "))
            : std::string("none shows a second hardware thread"));
    if (smt.contains("note")) std::cout << "; " << smt["note"].get<std::string>();
    std::cout << "\n";
  }
  std::cout << "background policies, each tried on a thread of its own and read back:\n";
  for (const nlohmann::json& p : policies)
    std::cout << fmt::format("  {:<14}{}\n", p["policy"].get<std::string>(),
                             p["refused"].is_null()
                                 ? "set (" + p["read_back"].get<std::string>() + ")"
                                 : "refused: " + p["refused"].get<std::string>() + " (kept " +
                                       p["read_back"].get<std::string>() + ")");
  std::cout << fmt::format("study {}: {} of {} conditions run on this host\n",
                           expanded->front().study, runs, runs + not_run.size());
  for (const nlohmann::json& n : not_run)
    std::cout << fmt::format("  {}: not run on this host: {}\n", n["condition"].get<std::string>(),
                             n["why"].get<std::string>());
  return kExitOk;
}

void add_host_command(CommandRegistry& registry) {
  struct HostArguments {
    bool json = false;
    std::string study = "background-policies";
  };
  auto args = std::make_shared<HostArguments>();
  auto* host = registry.app.add_subcommand(
      "host",
      "What this machine gives background work, without a GPU: CPUs and SMT (and whether a "
      "virtual machine may hide it), each scheduling policy of this OS applied on a thread and "
      "read back or refused, and which conditions of a study of policies run here");
  host->add_option("--study", args->study,
                   "The study whose conditions to check (a preset or a file; default: "
                   "background-policies)");
  host->add_flag("--json", args->json, "Print JSON instead of text");
  registry.add(host, [args] { return command_host(args->study, args->json); });
}

}  // namespace gpuoverlap::commands
