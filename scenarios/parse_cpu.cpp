#include <fmt/format.h>

#include <algorithm>

#include "core/cpu_affinity.h"
#include "core/thread_policy.h"
#include "scenarios/scenario_grammar.h"

namespace gpuoverlap::scenario_grammar {

namespace {

class CpuGrammar : public FieldReader {
 public:
  using FieldReader::FieldReader;

  // [cpu]: docs/scenario-format.md, "The CPU side of a frame". Every key is checked here,
  // before any GPU work; the work per worker and the chain must fit in a paced frame.
  Result<jobs::CpuFrameSpec> parse_cpu(const toml::node& node, const std::string& where) const {
    using namespace jobs;
    const toml::table* t = node.as_table();
    if (!t) return error_at(&node, where + " must be a table");
    GPUOVERLAP_TRY(
        only_keys(*t,
                  {"workers", "jobs_per_frame", "jobs_per_worker", "cpu_ms_per_frame",
                   "cpu_ms_per_worker", "critical_jobs", "wait", "spin_us", "loop_wait", "gpu_wait",
                   "slice_ms", "frame_period_ms", "frames_in_flight", "pin_workers"},
                  where));
    CpuFrameSpec spec;
    // Workers: "cores" (the default) or a count.
    spec.workers_from_cores = true;
    if (const toml::node* workers = t->get("workers")) {
      if (workers->is_string() && *workers->value<std::string_view>() == "cores") {
        spec.workers_from_cores = true;
      } else {
        auto v = int_field(*t, "workers", where, 1, kMaxWorkers, 1);
        if (!v)
          return error_at(workers, fmt::format("'workers' in {} must be an integer in [1, {}] or "
                                               "\"cores\" (the usable cores less the poller's)",
                                               where, kMaxWorkers));
        spec.workers = *v;
        spec.workers_from_cores = false;
      }
    }
    if (spec.workers_from_cores) spec.workers = std::max(1u, usable_cpus() - 1);
    for (auto [total, per_worker] :
         {std::pair<std::string_view, std::string_view>{"jobs_per_frame", "jobs_per_worker"},
          {"cpu_ms_per_frame", "cpu_ms_per_worker"}})
      if (t->get(total) && t->get(per_worker))
        return error_at(t->get(per_worker),
                        fmt::format("{}: give '{}' or '{}', not both", where, total, per_worker));
    if (t->get("jobs_per_worker")) {
      auto v = int_field(*t, "jobs_per_worker", where, 1, 10'000, 1);
      if (!v) return v.error();
      spec.jobs_per_worker = *v;
      spec.jobs_per_frame = *v * spec.workers;
      if (spec.jobs_per_frame > kMaxJobsPerFrame)
        return error_at(
            t->get("jobs_per_worker"),
            fmt::format("{}: {} jobs per worker on {} workers is {} jobs a frame, "
                        "more than {}",
                        where, *v, spec.workers, spec.jobs_per_frame, kMaxJobsPerFrame));
    } else {
      auto v = int_field(*t, "jobs_per_frame", where, 1, kMaxJobsPerFrame, spec.jobs_per_frame);
      if (!v) return v.error();
      spec.jobs_per_frame = *v;
    }
    // Milliseconds: positive and finite (TOML's nan and inf fail the range).
    auto positive_ms = [&](std::string_view key, double fallback) -> Result<double> {
      auto v = number_field(*t, key, where, 0, 10'000, fallback);
      if (!v) return v.error();
      if (*v <= 0)
        return error_at(t->get(key), fmt::format("'{}' in {} must be more than 0", key, where));
      return *v;
    };
    if (t->get("cpu_ms_per_worker")) {
      auto v = positive_ms("cpu_ms_per_worker", 1);
      if (!v) return v.error();
      spec.cpu_ms_per_worker = *v;
      spec.cpu_ms_per_frame = *v * spec.workers;
    } else {
      auto v = positive_ms("cpu_ms_per_frame", spec.cpu_ms_per_frame);
      if (!v) return v.error();
      spec.cpu_ms_per_frame = *v;
    }
    auto critical = int_field(*t, "critical_jobs", where, 0, 1000, spec.critical_jobs);
    if (!critical) return critical.error();
    spec.critical_jobs = *critical;
    if (spec.critical_jobs > spec.jobs_per_frame)
      return error_at(t->get("critical_jobs") ? t->get("critical_jobs") : &node,
                      fmt::format("{}: critical_jobs ({}) are some of the frame's jobs, and it "
                                  "has {}",
                                  where, spec.critical_jobs, spec.jobs_per_frame));
    GPUOVERLAP_TRY(named_field(*t, "wait", where, &node, parse_wait_mode,
                               names_list(kWaitModeNames), spec.wait));
    if (t->get("spin_us") && spec.wait != WaitMode::spin_then_sleep)
      return error_at(t->get("spin_us"),
                      where + ": spin_us applies only with wait = \"spin_then_sleep\"");
    auto spin = number_field(*t, "spin_us", where, 0, 1'000'000, spec.spin_us);
    if (!spin) return spin.error();
    spec.spin_us = *spin;
    GPUOVERLAP_TRY(named_field(
        *t, "loop_wait", where, &node,
        [](std::string_view text) { return value_of(kLoopWaitNames, text); },
        names_list(kLoopWaitNames), spec.loop_wait));
    GPUOVERLAP_TRY(named_field(
        *t, "gpu_wait", where, &node,
        [](std::string_view text) { return value_of(kLoopWaitNames, text); },
        names_list(kLoopWaitNames), spec.gpu_wait));
    if (const toml::node* slice_node = t->get("slice_ms")) {
      auto slice = number_field(*t, "slice_ms", where, kMinCustomSliceNs / 1e6,
                                kMaxCustomSliceNs / 1e6, 1.0);
      if (!slice) return slice.error();
      if (const std::string& why = custom_slice_unsupported_reason(); !why.empty())
        return error_at(slice_node, where + ": slice_ms: this host takes no custom slice: " + why);
      spec.slice_ms = *slice;
    }
    auto period = number_field(*t, "frame_period_ms", where, 0, 10'000, spec.frame_period_ms);
    if (!period) return period.error();
    spec.frame_period_ms = *period;
    auto in_flight =
        int_field(*t, "frames_in_flight", where, 1, kMaxFramesInFlight, spec.frames_in_flight);
    if (!in_flight) return in_flight.error();
    spec.frames_in_flight = *in_flight;
    auto pin = bool_field(*t, "pin_workers", where, spec.pin_workers);
    if (!pin) return pin.error();
    spec.pin_workers = *pin;
    if (spec.frame_period_ms > 0) {
      if (spec.cpu_ms_per_worker_share() > spec.frame_period_ms)
        return error_at(&node,
                        fmt::format("{}: each worker's share of the CPU work ({:.3g} ms: {:.3g} "
                                    "ms on {} workers) is longer than frame_period_ms ({:g}): "
                                    "no frame could keep its pace",
                                    where, spec.cpu_ms_per_worker_share(), spec.cpu_ms_per_frame,
                                    spec.workers, spec.frame_period_ms));
      if (spec.critical_path_ms() > spec.frame_period_ms)
        return error_at(&node, fmt::format("{}: the chain of {} critical jobs ({:.3g} ms) is "
                                           "longer than frame_period_ms ({:g})",
                                           where, spec.critical_jobs, spec.critical_path_ms(),
                                           spec.frame_period_ms));
    }
    return spec;
  }
};

}  // namespace

Result<jobs::CpuFrameSpec> parse_cpu_table(const FieldReader& fields, const toml::node& node,
                                           const std::string& where) {
  return CpuGrammar(fields.source()).parse_cpu(node, where);
}

}  // namespace gpuoverlap::scenario_grammar
