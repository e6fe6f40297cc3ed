#include "analysis/sched_account.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "engine/sched_attribution.h"
#include "schedtrace/thread_waits.h"

namespace gpuoverlap {

std::optional<SchedAccount> sched_account(const std::vector<const ScenarioOutcome*>& rounds) {
  SchedAccount out;
  double run_delay_ms = 0;
  bool run_delay_known = false;
  std::map<std::string, std::vector<double>> ms_by_way;
  // Files name a way by its kinds (sched_waits.csv); a kind this build does not know is kept as
  // written.
  auto way_of = [](const SchedWaitRow& w) {
    const auto lost = value_of(kLostByNames, w.lost_by);
    const auto back = value_of(kGivenBackByNames, w.given_back_by);
    return fmt::format("{}, {}", lost ? lost_phrase(*lost) : w.lost_by,
                       back ? back_phrase(*back) : w.given_back_by);
  };
  for (const ScenarioOutcome* round : rounds) {
    if (!round->timeline || !round->timeline->sched_recorded) continue;
    ++out.rounds;
    for (const FrameRecord& f : round->timeline->frames) {
      if (!f.sched_loop_runnable_us) continue;
      ++out.frames;
      out.runnable_ms += *f.sched_loop_runnable_us / 1000.0;
      out.to_background_ms += f.sched_loop_to_background_us.value_or(0) / 1000.0;
      if (f.loop_run_delay_us) {
        run_delay_known = true;
        run_delay_ms += *f.loop_run_delay_us / 1000.0;
      }
    }
    for (const SchedWaitRow& w : round->timeline->sched_waits)
      if (w.thread == "frame loop" && w.frame &&
          w.holder_kind == name_of(kThreadKindNames, ThreadKind::background))
        ms_by_way[way_of(w)].push_back(w.runnable_us / 1000.0);
  }
  if (out.rounds == 0) return std::nullopt;
  if (run_delay_known) out.run_delay_ms = run_delay_ms;
  out.line = fmt::format(
      "the kernel's record ({} round{}, {} frames): the frame loop was runnable "
      "without a CPU {:.1f} ms",
      out.rounds, out.rounds == 1 ? "" : "s", out.frames, out.runnable_ms);
  if (out.run_delay_ms && *out.run_delay_ms > 0)
    out.line +=
        fmt::format(" ({:.0f} % of its run delay)", 100.0 * out.runnable_ms / *out.run_delay_ms);
  if (const auto most = costliest_way(ms_by_way)) {
    out.most_way = most->way;
    out.most_times = most->times;
    out.most_ms = most->total_ms;
    out.most_p50_ms = most->p50_ms;
  }
  if (out.to_background_ms <= 0 || out.most_way.empty()) {
    out.line += ", none of it behind a background thread";
  } else {
    out.line += fmt::format(
        ", {:.1f} ms of it behind background threads, {}", out.to_background_ms,
        describe(CostliestWay{out.most_way, out.most_ms, out.most_times, out.most_p50_ms}));
  }
  return out;
}

}  // namespace gpuoverlap
