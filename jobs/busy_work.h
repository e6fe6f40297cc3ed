// The jobs' CPU work: deterministic integer arithmetic that the compiler cannot remove, sized
// in iterations, and the calibration that turns milliseconds into iterations on this machine.
//
// "2 ms of work" means 2 ms on an idle core: the calibration takes the fastest of several
// timed runs, each timed on the thread's own CPU clock (Linux), so time slices another thread
// took from the core at calibration time do not make the work shorter (a busy hyper-thread
// sibling or a low clock still can: the verdict's cpu_phase_of_asked shows it). It
// runs once per process (calibrate_once) before any background work of the run starts, so
// every condition of a study does the same work whatever its load.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>

namespace gpuoverlap::jobs {

// Runs `iterations` steps of a 64-bit mixing function from `seed`; returns the final state so
// that the work has a result (callers fold it into a sink).
std::uint64_t busy_work(std::uint64_t iterations, std::uint64_t seed);

struct BusyWorkCalibration {
  double iterations_per_us = 0;
  double best_run_ms = 0;  // the fastest timed run
  double spread_pct = 0;   // (slowest - fastest) / fastest over the timed runs
  std::uint32_t runs = 0;
  // The fastest run on the wall clock, and the runs that ran on their CPU for less than
  // kSharedRunCpuShare of their wall time (shared it, or lost it): with the thread CPU clock,
  // best_run_ms leaves that time out.
  double wall_best_run_ms = 0;
  std::uint32_t shared_runs = 0;
  const char* clock = "wall clock";  // what best_run_ms was timed on
  std::int64_t measured_at_ns = 0;   // CLOCK_MONOTONIC_RAW
};
inline constexpr double kSharedRunCpuShare = 0.9;

// Times `runs` runs of about `run_ms` each. Contract: runs >= 1, run_ms > 0.
BusyWorkCalibration calibrate_busy_work(std::uint32_t runs = 7, double run_ms = 2.0);

// The process's calibration: the first call measures, every later one returns the same.
const BusyWorkCalibration& calibrate_once();

nlohmann::json to_json(const BusyWorkCalibration& calibration);

}  // namespace gpuoverlap::jobs
