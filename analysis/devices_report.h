// A run on several devices (`run --device all` or a list) as one page, the devices side by
// side: which devices, then one table per question the report answers (overlap across queues
// and on one queue, what each barrier costs, each workload's duration, preemption latency, the
// studies' decisions) with a column per device. Each device's folder is a results folder of its
// own, with its own report; this page compares them.
//
// A difference is marked where the devices' values are apart beyond their 95 % intervals (the
// medians' distribution-free intervals, the shares' Wilson intervals): intervals that do not
// overlap. Two identical GPUs differ only by their noise, which is what the intervals hold.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis/results.h"

namespace gpuoverlap {

struct DeviceResults {
  std::string folder;     // relative to the run's folder: "gpu0"
  nlohmann::json device;  // run.json's `devices` entry's "device" (meta.json's "device")
  LoadedRun run;          // the folder, loaded
};

// report.md of the run's folder. Links point into each device's folder (its report.md).
std::string devices_report(const std::vector<DeviceResults>& devices);

}  // namespace gpuoverlap
