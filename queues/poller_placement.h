// Where the stamp poller runs: pinned to a CPU or not, at which priority. The poller is the
// method's own clock: a poller that shares its core, or that the scheduler preempts, sees
// stamps late, and the detection windows (settling_spin.h) show it. A core of its own and a
// raised priority are how a busy host still gives clean stamps.
//
// Applied by each polling thread to itself as it starts (the threads are made per frame or per
// run). What the OS grants is read back from the thread, never assumed: a refused priority is
// a note, and the run goes on at what was granted.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/enum_names.h"
#include "core/host_info.h"
#include "core/result.h"

namespace gpuoverlap {

// normal: as the process's other threads; high: SCHED_OTHER at nice -10 on Linux,
// THREAD_PRIORITY_HIGHEST on Windows; realtime: SCHED_FIFO priority 1 on Linux,
// THREAD_PRIORITY_TIME_CRITICAL on Windows (a spinning real-time thread owns its core: give it
// one of its own).
enum class PollerPriority { normal, high, realtime };
inline constexpr EnumNames<PollerPriority, 3> kPollerPriorityNames{
    {{PollerPriority::normal, "normal"},
     {PollerPriority::high, "high"},
     {PollerPriority::realtime, "realtime"}}};
std::string_view to_string(PollerPriority priority);
std::optional<PollerPriority> parse_poller_priority(std::string_view text);

struct PollerPlacement {
  std::optional<int> cpu;  // pinned to this CPU; nullopt: wherever the scheduler puts it
  PollerPriority priority = PollerPriority::normal;
  bool automatic = false;  // `cpu` is the default's choice (poller_placement), not asked for
};

// The fewest usable CPUs with which the default gives the poller one of its own: with fewer,
// a reserved CPU would take half the machine or more from the work being measured (on a CPU
// driver, the GPU work itself).
inline constexpr std::size_t kMinCpusForOwnPollerCore = 4;

// What a polling thread got: the CPU it is pinned to (nullopt: unpinned, asked or refused), its
// scheduling read back, and one line per refusal ("" when everything asked was granted).
struct PollerGranted {
  std::optional<int> cpu;
  ThreadScheduling scheduling;
  std::string refused;
};

// Pins and raises the calling thread as `placement` asks; returns what was refused, one line
// ("" when all was granted; the default placement asks nothing). What each polling thread
// does as it starts: what a run gets was read back once, by place_this_thread.
std::string apply_placement(const PollerPlacement& placement);

// apply_placement, then the thread's scheduling read back: what meta.json records.
PollerGranted place_this_thread(const PollerPlacement& placement);

// Gives a pinned poller its CPU to itself within this process: the calling thread (the main
// thread, before it opens the device or starts any other thread) leaves the poller's CPU, and
// every thread made afterwards inherits that: the GPU driver's, the frame loop, the background
// runtime's, a positive control's, a load process. (Measured on an H200 without it: a study's
// control threads time-sliced the poller, 4 ms windows on most stamps.) The poller threads pin
// themselves back onto it. True where it was done; false without a pinned CPU, or where the
// platform refuses. Several pollers that run at once (one per device): every pinned one's CPU
// is kept free.
bool reserve_poller_cpus(const std::vector<PollerPlacement>& placements);

// The placement a run asks for, checked against this process's CPUs (untrusted: from the
// command line). `requested`: a CPU number; "none", unpinned; "auto" (the default), the
// quietest CPU of the affinity mask (quietest_cpu) where the mask has at least
// kMinCpusForOwnPollerCore, else unpinned; on Windows always unpinned (a new thread takes the
// process's affinity there, so the others could not be kept off). (Unpinned under a game frame,
// whose workers spin on every other core, the H100's and H200's pollers had windows of 0.1-4 ms on
// most stamps; on a CPU of their own, 0.3-0.5 µs.) A CPU outside the mask, or text that is none of
// these, is an input Error naming the usable CPUs.
Result<PollerPlacement> poller_placement(std::string_view requested, PollerPriority priority);

// The placements of `count` pollers that run at once (`run --concurrent`: one per device), each
// on a CPU of its own. `requested`: "none", all unpinned; "auto", the `count` quietest CPUs where
// the mask has at least count + kMinCpusForOwnPollerCore - 1 (the work keeps three or more),
// else all unpinned (on Windows always unpinned); a comma-separated list of `count` distinct
// CPUs of the mask, in device order. Anything else is an input Error naming the usable CPUs.
Result<std::vector<PollerPlacement>> poller_placements(std::string_view requested,
                                                       PollerPriority priority, std::size_t count);

// Of `cpus` (not empty), the one that has served the fewest interrupts since boot
// (/proc/interrupts; the first where that is unknown): each interrupt takes a pinned poller off
// its CPU, and devices' interrupts are routed to a few CPUs.
int quietest_cpu(const std::vector<int>& cpus);

// meta.json's "poller": what was asked, what a thread placed so got, and whether the process's
// other threads were kept off its CPU (reserve_poller_cpus).
nlohmann::json to_json(const PollerPlacement& asked, const PollerGranted& granted,
                       bool cpu_reserved);

}  // namespace gpuoverlap
