// CPU time taken from this machine's CPUs by a hypervisor ("steal", /proc/stat), against the
// time they were busy. On a virtual machine a spinning poller loses the CPU to the host for
// microseconds to milliseconds at a time, which no code of ours can prevent: the self-test
// reports it beside the poll detection latency so a tail caused by the host is named as such.
#pragma once

#include <cstdint>
#include <optional>

namespace gpuoverlap {

struct CpuTimes {
  std::uint64_t busy_ticks = 0;   // user + nice + system + irq + softirq, all CPUs
  std::uint64_t steal_ticks = 0;  // all CPUs
};

// nullopt where /proc/stat is missing or unreadable (not Linux).
std::optional<CpuTimes> read_cpu_times();

// Steal over [before, after] as a fraction of busy + steal time; nullopt when nothing ran.
std::optional<double> steal_fraction(const CpuTimes& before, const CpuTimes& after);

}  // namespace gpuoverlap
