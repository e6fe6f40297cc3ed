// The CPUs this process may run on and a thread's place among them: what the game frame's
// workers (jobs/) and the stamp poller (queues/) are pinned with, and what the results record.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuoverlap {

// The CPUs this process may run on (its affinity mask; the hardware threads where there is
// none), at least 1.
std::uint32_t usable_cpus();
// Their numbers, in increasing order (empty where the platform cannot say).
std::vector<int> usable_cpu_ids();
// The CPUs the calling thread may run on (its own affinity, which pinning narrows), in
// increasing order (Windows: its processor group's, numbered on from 64 per group); none where
// the OS call fails.
std::optional<std::vector<int>> this_thread_cpus();
// Why this_thread_cpus() gave none.
std::string thread_cpus_unavailable_reason();
// `cpus` (increasing) as ranges, "0-3,8,10-11"; "" for none.
std::string describe_cpus(const std::vector<int>& cpus);
// Parses describe_cpus' form ("0-3,8,10-11"): increasing, distinct, each in [0, 4095]; none for
// anything else (a range backwards, a repeat, a stray character).
std::optional<std::vector<int>> parse_cpus(std::string_view text);
// The machine's SMT groups among `cpus`: for each core that has hardware threads in `cpus`,
// their numbers, increasing (Linux: topology/thread_siblings_list). A CPU alone in its core
// is a group of one. Empty where the platform does not say (Windows here, no sysfs). A
// virtual machine may show every vCPU alone although its host runs them on siblings.
std::vector<std::vector<int>> smt_groups(const std::vector<int>& cpus);
// Where smt_groups found its facts, or why it found none.
std::string smt_groups_source();
// Pins the calling thread to CPU `cpu`; false where the platform refuses.
bool pin_current_thread(int cpu);
// The CPU the calling thread runs on now; -1 where the platform cannot say.
int current_cpu();
// Lets the calling thread run on every CPU of the process's mask but `cpu`; the threads it
// creates afterwards inherit that. False where the platform refuses or no other CPU is left.
bool keep_this_thread_off(int cpu);
// The same for several CPUs at once (one poller per device of a concurrent run).
bool keep_this_thread_off(const std::vector<int>& cpus);
// Lets the calling thread run on `cpus` only (a device's share in `run --concurrent
// --split-cpus`); the threads it creates afterwards inherit that on Linux, not on Windows (a new
// thread takes the process's affinity there). False where the platform refuses.
bool restrict_this_thread_to(const std::vector<int>& cpus);

}  // namespace gpuoverlap
