// The synthetic studies the verdict's tests share (verdict_test.cpp, verdict_units_test.cpp,
// verdict_pacing_test.cpp, verdict_time_account_test.cpp, verdict_background_test.cpp,
// study_progress_test.cpp): conditions, rounds and game frames built by hand from seeded samples.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "analysis/verdict.h"

namespace gpuoverlap::verdict_tests {

inline std::vector<double> normal_sample(double mean, double sd, std::size_t n,
                                         std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::normal_distribution<double> dist(mean, sd);
  std::vector<double> out(n);
  for (double& v : out) v = dist(random);
  return out;
}

// One condition of a study: `frames` frames with the given CPU frame times, one workload of
// 50 µs on the poll clock, background compiles overlapping every frame unless `idle`.
inline ScenarioOutcome condition(const std::string& name,
                                 std::optional<background::BackgroundSpec> bg,
                                 const std::vector<double>& cpu_frame_us, bool overlapped,
                                 std::uint32_t round = 0, std::uint32_t rounds = 0) {
  ScenarioOutcome out;
  out.scenario.name = "study/" + name;
  out.scenario.round = round;
  out.scenario.rounds = rounds;
  out.scenario.study = "study";
  out.scenario.condition = name;
  out.scenario.queues.push_back({"direct", QueueType::direct, QueuePriority::normal});
  out.scenario.workloads.push_back({"A", 0, WorkloadKind::compute, 8, 64, {}, std::nullopt});
  out.scenario.background = bg;
  ScenarioTimeline t;
  for (std::uint32_t f = 0; f < cpu_frame_us.size(); ++f) {
    FrameRecord fr;
    fr.frame = f;
    fr.cpu_frame_us = cpu_frame_us[f];
    // Unpaced and one workload: the frame interval is the frame, the GPU span the workload.
    fr.frame_interval_us = cpu_frame_us[f];
    fr.gpu_span_us = 50;
    fr.cpu_submit_us = 20;
    fr.submit_to_start_us = 5;
    fr.poll_gap_max_us = 1;
    fr.bg_managed = overlapped && bg && bg->unmanaged_threads == 0 ? 1 : 0;
    fr.bg_unmanaged = overlapped && bg && bg->unmanaged_threads > 0 ? 1 : 0;
    t.frames.push_back(fr);
    WorkloadFrameRecord r;
    r.frame = f;
    r.poll_start_us = 5;
    r.poll_end_us = 55;
    t.records.push_back(r);
  }
  out.timeline = t;
  return out;
}

inline background::BackgroundSpec managed_spec() { return {}; }
inline background::BackgroundSpec unmanaged_spec() {
  background::BackgroundSpec s;
  s.unmanaged_threads = 4;
  return s;
}

inline const VerdictRow& row_of(const StudyVerdict& v, const std::string& condition,
                                const std::string& metric) {
  for (const VerdictRow& r : v.rows)
    if (r.condition == condition && r.metric == metric) return r;
  throw std::runtime_error("no row " + condition + " " + metric);
}

// Rounds of a study, each condition's round r next to the baseline's round r: CPU frame
// times of round r are `level[r]` plus noise in both, i.e. the machine drifted between rounds.
inline std::vector<ScenarioOutcome> rounds_of(const std::string& name,
                                              std::optional<background::BackgroundSpec> bg,
                                              const std::vector<double>& level, double factor,
                                              std::uint64_t seed) {
  std::vector<ScenarioOutcome> out;
  for (std::uint32_t r = 0; r < level.size(); ++r)
    out.push_back(condition(name, bg, normal_sample(level[r] * factor, 10, 200, seed + r), true,
                            r + 1, static_cast<std::uint32_t>(level.size())));
  return out;
}

inline std::vector<const ScenarioOutcome*> all_of(
    const std::vector<std::vector<ScenarioOutcome>*>& sets) {
  std::vector<const ScenarioOutcome*> out;
  for (const auto* set : sets)
    for (const ScenarioOutcome& o : *set) out.push_back(&o);
  return out;
}

// A game frame ([cpu]): the frame-level endpoints of its CPU phase decide, the components are
// diagnostics, and a paced frame's tail is its stutter rate.
inline ScenarioOutcome game_condition(const std::string& name,
                                      std::optional<background::BackgroundSpec> bg,
                                      double phase_factor, double submit_factor,
                                      std::uint32_t stutter_every, std::uint32_t round,
                                      std::uint64_t seed) {
  const auto phase = normal_sample(5000 * phase_factor, 50, 300, seed);
  ScenarioOutcome o =
      condition(name, bg, normal_sample(6000, 50, 300, seed + 1), bg.has_value(), round, 6);
  jobs::CpuFrameSpec cpu;
  cpu.workers = 15;
  cpu.critical_jobs = 3;
  cpu.frame_period_ms = 8;
  o.scenario.cpu = cpu;
  for (FrameRecord& f : o.timeline->frames) {
    f.cpu_phase_us = phase[f.frame];
    f.critical_path_us = phase[f.frame] * 0.5;
    f.wake_max_us = 20;
    f.frame_interval_us = stutter_every && f.frame % stutter_every == 0 ? 20'000.0 : 8000.0;
    f.cpu_submit_us *= submit_factor;
  }
  return o;
}

inline std::vector<ScenarioOutcome> game_rounds(const std::string& name,
                                                std::optional<background::BackgroundSpec> bg,
                                                double phase_factor, double submit_factor,
                                                std::uint32_t stutter_every, std::uint64_t seed) {
  std::vector<ScenarioOutcome> out;
  for (std::uint32_t r = 1; r <= 6; ++r)
    out.push_back(
        game_condition(name, bg, phase_factor, submit_factor, stutter_every, r, seed + 10 * r));
  return out;
}

// Synthetic rounds of a paced 8 ms frame: `rounds` rounds of `frames` frames, each round with
// a host state of its own (a shift of every frame by N(0, `round_sd`)), frames N(8000 *
// `factor`, 60) µs, a share `late_share` of them 9 ms (late, short of a stutter), and, with
// probability `burst_chance` per round, a burst of 6 frames of 16-40 ms (a host stall).
inline std::vector<ScenarioOutcome> paced_rounds(const std::string& name,
                                                 std::optional<background::BackgroundSpec> bg,
                                                 bool null_control, double factor,
                                                 double late_share, double round_sd,
                                                 double burst_chance, std::uint32_t rounds,
                                                 std::uint32_t frames, std::uint64_t seed) {
  std::vector<ScenarioOutcome> out;
  std::mt19937_64 random(seed);
  std::normal_distribution<double> round_shift(0, round_sd), jitter(0, 60);
  std::uniform_real_distribution<double> unit(0, 1), burst_us(16'000, 40'000);
  for (std::uint32_t r = 1; r <= rounds; ++r) {
    ScenarioOutcome o =
        condition(name, bg, std::vector<double>(frames, 6000.0), bg.has_value(), r, rounds);
    o.scenario.null_control = null_control;
    jobs::CpuFrameSpec cpu;
    cpu.workers = 15;
    cpu.critical_jobs = 3;
    cpu.frame_period_ms = 8;
    o.scenario.cpu = cpu;
    const double shift = round_shift(random);
    const bool burst = unit(random) < burst_chance;
    for (FrameRecord& f : o.timeline->frames) {
      f.cpu_phase_us = 5000 + jitter(random);
      f.critical_path_us = 2500;
      f.wake_max_us = 20;
      f.frame_interval_us = unit(random) < late_share
                                ? 9000.0 + jitter(random)
                                : 8000.0 * factor * (1 + shift) + jitter(random);
      if (burst && f.frame >= 40 && f.frame < 46) {  // the jobs stalled, and the frame with them
        f.frame_interval_us = burst_us(random);
        f.cpu_phase_us = *f.frame_interval_us - 3000;
      }
    }
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace gpuoverlap::verdict_tests
