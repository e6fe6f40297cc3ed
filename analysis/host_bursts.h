#pragma once
// Host bursts: frames whose CPU phase took many times the baseline's median for the same work
// (on the H100 machine, 16-42 ms for 5 ms of jobs, in clusters, with nothing else running).
// They are the host's, not the background work's, when the baseline has them; a round that
// holds one must not decide a verdict alone (judge_study checks the decision without it).
// Each burst frame is named by what the workers' thread accounting shows for the interval that
// holds its jobs (the next frame's record: a record's interval ends at its frame's start; unknown
// for the last frame of a round):
// - waited for a CPU: the worst worker's run delay covers half the excess or more;
// - ran longer: the workers' on-CPU time grew by half the excess or more (slower clocks or
//   caches, or a hypervisor's steal, which a guest's clock counts as running);
// - off a CPU: neither (blocked, stopped, or the whole machine paused; on a virtual machine
//   whose kernel accounts steal, time a hypervisor took counts as neither: the rounds' steal,
//   below, says whether that can be it);
// - unknown: the frame has no worker figures (a round's last frame, whose jobs' interval no
//   record holds; Windows; files from before them).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/suite_runner.h"

namespace gpuoverlap {

// A frame is a burst when its CPU phase is at least this many times the baseline's median.
inline constexpr double kBurstFactor = 3.0;

struct HostBursts {
  std::size_t frames = 0;             // burst frames
  std::vector<std::uint32_t> rounds;  // the rounds that had any, ascending
  std::size_t waited_for_cpu = 0, ran_longer = 0, off_cpu = 0, unknown = 0;
  // CPU time a hypervisor took from the machine over the rounds with bursts, summed over its
  // CPUs (ScenarioOutcome::host_steal_ms); nullopt where a round has no figure.
  std::optional<double> steal_ms_in_burst_rounds;
};

// What a frame is compared with: the baseline's median CPU phase and the workers' median summed
// on-CPU time per frame interval. nullopt when the baseline has no CPU phase (no [cpu]).
struct BurstReference {
  double cpu_phase_p50_us = 0;
  std::optional<double> workers_on_cpu_p50_us;
  std::uint32_t workers = 1;
  double line_us() const { return kBurstFactor * cpu_phase_p50_us; }
};
std::optional<BurstReference> burst_reference(const std::vector<const ScenarioOutcome*>& baseline);

// The bursts among every frame of `rounds` (one condition's).
HostBursts find_host_bursts(const std::vector<const ScenarioOutcome*>& rounds,
                            const BurstReference& reference);

// "3 host bursts (CPU phase past 15.0 ms) in round 2: 2 waited for a CPU, 1 off a CPU;
// hypervisor steal in that round: 0 ms"; empty when there are none.
std::string describe_host_bursts(const HostBursts& bursts, const BurstReference& reference);

}  // namespace gpuoverlap
