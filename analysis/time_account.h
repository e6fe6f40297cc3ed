#pragma once
// Where a study condition's frame time went, against the baseline. The frame loop's phases
// (engine/loop_phases.h: waiting for the jobs, recording and submitting, the tool's own work,
// waiting for the GPU, the pacing sleep, waking late after it) add up to each frame interval,
// so the mean shifts of the phases add up to the mean shift of the interval: the phase that
// moved most is where the time went, with no remainder left unexplained. Beside it, the frame
// loop's time runnable but not running (the scheduler kept it off a CPU) and how many of the
// condition's late frames a background task overlapped.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "engine/suite_runner.h"

namespace gpuoverlap {

struct PhaseShift {
  std::string phase;  // "interval", a LoopPhase's name ("woke_late"), or "run_delay"
  double baseline_mean_us = 0, condition_mean_us = 0;
  double shift_us = 0;  // condition minus baseline
  // A 95 % interval of the shift over the round pairs (Student's t); empty below two pairs.
  std::optional<double> low_us, high_us;
};

struct TimeAccount {
  PhaseShift interval;                          // the frame interval itself
  std::vector<PhaseShift> phases;               // the six loop phases, in LoopPhase order
  std::optional<PhaseShift> run_delay;          // empty where the platform keeps none (Windows)
  std::size_t frames = 0;                       // the condition's frames with phases
  std::size_t late_frames = 0;                  // of them, beyond the late line (a paced frame)
  std::size_t late_overlapping_background = 0;  // of those, overlapped by a background task
  // Where the frame loop ran: of the condition's intervals with its CPU known and with a
  // background compile whose CPU is known running, those in which a compile thread started or
  // ended a compile on the CPU the frame loop started the frame on. A compile thread kept on
  // the frame loop's CPU is what its run delay waits behind.
  std::size_t intervals_with_compiles = 0;
  std::size_t intervals_sharing_cpu = 0;
  // Of the frames with the workers' CPUs known (a game frame's), those in which a worker ran
  // a job on the frame loop's CPU: the condition's and the baseline's.
  std::size_t frames_with_worker_cpus = 0, frames_worker_on_loop_cpu = 0;
  std::size_t baseline_frames_with_worker_cpus = 0, baseline_frames_worker_on_loop_cpu = 0;
  std::string line;  // describe_time_account
};

// `baseline_rounds` and `rounds` are paired by round number, as the verdict pairs them;
// `use` selects the condition's frames that are evidence; `late_line_us` is where a paced
// frame is late (empty: unpaced). Empty when the frames carry no phases (none measured).
std::optional<TimeAccount> account_time(const std::vector<const ScenarioOutcome*>& baseline_rounds,
                                        const std::vector<const ScenarioOutcome*>& rounds,
                                        bool (*use)(const FrameRecord&),
                                        std::optional<double> late_line_us);

// One sentence: "frame interval +1.42 ms (mean): the frame loop waited +1.20 ms for a CPU
// (runnable but not running); the phase that grew most: waking late after the pacing sleep,
// +1.31 ms [1.10, 1.52]; 97 % of late frames (320 of 330) overlapped a background task; in
// 93 of 98 intervals the frame loop ran on a CPU a compile thread ran on; a worker ran on the
// frame loop's CPU in 45 % of frames (baseline 3 %)". The
// wait for a CPU leads when it is half the change or more; otherwise the phase leads ("most
// of it …") and the run delay follows.
std::string describe_time_account(const TimeAccount& account);

// A phase's name in a sentence ("waking late after the pacing sleep").
std::string phase_label(const std::string& phase);

}  // namespace gpuoverlap
