#include "analysis/host_bursts.h"

#include <fmt/format.h>

#include <algorithm>

#include "timeline/statistics.h"

namespace gpuoverlap {

std::optional<BurstReference> burst_reference(const std::vector<const ScenarioOutcome*>& baseline) {
  std::vector<double> cpu_phase_us, workers_on_cpu_us;
  BurstReference reference;
  for (const ScenarioOutcome* r : baseline) {
    if (!r->timeline) continue;
    if (r->scenario.cpu) reference.workers = std::max<std::uint32_t>(1, r->scenario.cpu->workers);
    for (const FrameRecord& f : r->timeline->frames) {
      if (f.status != RecordStatus::ok) continue;
      if (f.cpu_phase_us) cpu_phase_us.push_back(*f.cpu_phase_us);
      if (f.workers_on_cpu_us) workers_on_cpu_us.push_back(*f.workers_on_cpu_us);
    }
  }
  const auto median = percentile(cpu_phase_us, 50);
  if (!median || *median <= 0) return std::nullopt;
  reference.cpu_phase_p50_us = *median;
  reference.workers_on_cpu_p50_us = percentile(workers_on_cpu_us, 50);
  return reference;
}

HostBursts find_host_bursts(const std::vector<const ScenarioOutcome*>& rounds,
                            const BurstReference& reference) {
  HostBursts out;
  bool steal_known = true;
  double steal_ms = 0;
  for (const ScenarioOutcome* r : rounds) {
    if (!r->timeline) continue;
    bool round_had_one = false;
    const std::vector<FrameRecord>& frames = r->timeline->frames;
    for (std::size_t i = 0; i < frames.size(); ++i) {
      const FrameRecord& f = frames[i];
      if (f.status != RecordStatus::ok || !f.cpu_phase_us || *f.cpu_phase_us < reference.line_us())
        continue;
      ++out.frames;
      round_had_one = true;
      const double excess_us = *f.cpu_phase_us - reference.cpu_phase_p50_us;
      // A frame's jobs run after its start; the workers' figures of the interval that holds
      // them are the next frame's record (each record's interval ends at its frame's start).
      const FrameRecord* next =
          i + 1 < frames.size() && frames[i + 1].frame == f.frame + 1 ? &frames[i + 1] : nullptr;
      if (!next || !next->workers_run_delay_max_us || !next->workers_on_cpu_us) {
        ++out.unknown;
      } else if (*next->workers_run_delay_max_us >= 0.5 * excess_us) {
        ++out.waited_for_cpu;
      } else if (reference.workers_on_cpu_p50_us &&
                 (*next->workers_on_cpu_us - *reference.workers_on_cpu_p50_us) /
                         static_cast<double>(reference.workers) >=
                     0.5 * excess_us) {
        ++out.ran_longer;
      } else {
        ++out.off_cpu;
      }
    }
    if (round_had_one) {
      out.rounds.push_back(r->scenario.round);
      steal_known = steal_known && r->host_steal_ms.has_value();
      steal_ms += r->host_steal_ms.value_or(0);
    }
  }
  if (out.frames > 0 && steal_known) out.steal_ms_in_burst_rounds = steal_ms;
  std::sort(out.rounds.begin(), out.rounds.end());
  out.rounds.erase(std::unique(out.rounds.begin(), out.rounds.end()), out.rounds.end());
  return out;
}

std::string describe_host_bursts(const HostBursts& bursts, const BurstReference& reference) {
  if (bursts.frames == 0) return {};
  std::vector<std::string> causes;
  auto cause = [&](std::size_t count, const char* what) {
    if (count > 0) causes.push_back(fmt::format("{} {}", count, what));
  };
  cause(bursts.waited_for_cpu, "waited for a CPU");
  cause(bursts.ran_longer, "ran longer on a CPU");
  cause(bursts.off_cpu, "off a CPU");
  cause(bursts.unknown, "cause unknown (a round's last frame, or no worker figures)");
  std::string steal;
  if (bursts.steal_ms_in_burst_rounds)
    steal = fmt::format("; hypervisor steal in th{}: {:.0f} ms",
                        bursts.rounds.size() == 1 ? "at round" : "ose rounds",
                        *bursts.steal_ms_in_burst_rounds);
  return fmt::format("{} host burst{} (CPU phase past {:.1f} ms) in round{} {}: {}{}",
                     bursts.frames, bursts.frames == 1 ? "" : "s", reference.line_us() / 1000.0,
                     bursts.rounds.size() == 1 ? "" : "s", fmt::join(bursts.rounds, ", "),
                     fmt::join(causes, ", "), steal);
}

}  // namespace gpuoverlap
