#include "engine/device_runs.h"

#include <fmt/format.h>

#include <chrono>
#include <exception>
#include <sstream>
#include <thread>

#include "core/cpu_affinity.h"
#include "engine/prefixed_lines.h"

namespace gpuoverlap {

namespace {

Result<std::filesystem::path> device_folder(const DeviceRunsRequest& request,
                                            const DeviceChoice& chosen) {
  if (!request.choices.several) return request.out;
  const std::filesystem::path out = request.out / fmt::format("gpu{}", chosen.index);
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  if (ec)
    return make_error(out.string() + ": could not be made: " + ec.message(),
                      ErrorCategory::environment);
  return out;
}

Result<DeviceRuns> one_after_another(const DeviceRunsRequest& request, const RunOnDevice& run_on,
                                     std::ostream& out, std::ostream& log) {
  DeviceRuns runs;
  const std::vector<DeviceChoice>& devices = request.choices.devices;
  for (const DeviceChoice& chosen : devices) {
    if (request.should_stop && request.should_stop()) break;
    auto folder = device_folder(request, chosen);
    if (!folder) return folder.error();
    const DeviceFacts& facts = request.api.devices()[chosen.index];
    if (request.choices.several)
      log << fmt::format("--- device {} of {}: {} -> {}\n", runs.runs.size() + 1, devices.size(),
                         facts.candidate.name, folder->string());
    DeviceRun run{chosen.index, *folder, facts.description, {}};
    runs.executors.push_back(request.api.executor(chosen.index));
    runs.statuses.push_back(
        run_on({chosen, runs.runs.size(), *folder, *runs.executors.back(), {}, out, log},
               run.outcome));
    runs.runs.push_back(std::move(run));
  }
  return runs;
}

Result<DeviceRuns> at_once(const DeviceRunsRequest& request, const RunOnDevice& run_on,
                           std::ostream& out, std::ostream& log) {
  DeviceRuns runs;
  const std::vector<DeviceChoice>& devices = request.choices.devices;
  const ConcurrencyPlan& plan = *request.plan;
  // A neighbour is waited for at most half an hour per scenario: its own frame deadlines end a
  // hang first.
  DeviceLockstep lockstep(plan, std::chrono::minutes(30), request.should_stop);
  std::vector<std::unique_ptr<PrefixedLines>> logs;
  std::vector<std::ostringstream> texts(devices.size());
  for (const DeviceChoice& chosen : devices) {
    auto folder = device_folder(request, chosen);
    if (!folder) return folder.error();
    runs.runs.push_back({chosen.index, *folder, request.api.devices()[chosen.index].description,
                         {}});
    runs.executors.push_back(request.api.executor(chosen.index));
    logs.push_back(std::make_unique<PrefixedLines>(log, fmt::format("[gpu{}] ", chosen.index)));
  }
  log << fmt::format(
      "--- {} device{} at once{}, each scenario started together on all of them\n",
      devices.size(), devices.size() == 1 ? "" : "s",
      plan.rounds > 0 ? fmt::format(" ({} concurrency rounds: each frame scenario also alone "
                                    "on each device)",
                                    plan.rounds)
                      : "");
  runs.statuses.assign(devices.size(), 0);
  std::vector<std::thread> threads;
  for (std::size_t slot = 0; slot < devices.size(); ++slot)
    threads.emplace_back([&, slot] {
      // Before its device is opened: the driver's threads, the frame loop and the workers
      // made from here on keep to the share.
      if (!request.cpu_shares.empty() && !restrict_this_thread_to(request.cpu_shares[slot]))
        *logs[slot] << "keeping this device's threads to its CPUs was refused; "
                       "they run on every CPU but the pollers'\n";
      try {
        runs.statuses[slot] =
            run_on({devices[slot], slot, runs.runs[slot].directory, *runs.executors[slot],
                    lockstep.before_scenario(slot), texts[slot], *logs[slot]},
                   runs.runs[slot].outcome);
      } catch (const std::exception& e) {
        runs.statuses[slot] = request.status_of_error(
            make_error(fmt::format("device {}: {}", devices[slot].index, e.what()),
                       ErrorCategory::environment));
      }
      lockstep.done(slot);
    });
  for (std::thread& t : threads) t.join();
  logs.clear();
  for (std::size_t slot = 0; slot < devices.size(); ++slot)
    out << fmt::format("--- device gpu{}: {}\n", devices[slot].index,
                       request.api.devices()[devices[slot].index].candidate.name)
        << texts[slot].str();
  return runs;
}

}  // namespace

Result<DeviceRuns> run_devices(const DeviceRunsRequest& request, const RunOnDevice& run_on,
                               std::ostream& out, std::ostream& log) {
  return request.plan ? at_once(request, run_on, out, log)
                      : one_after_another(request, run_on, out, log);
}

}  // namespace gpuoverlap
