// CPU time taken from this machine's CPUs by a hypervisor ("steal", /proc/stat), against the
// time they were busy. On a virtual machine a spinning poller loses the CPU to the host for
// microseconds to milliseconds at a time, which no code of ours can prevent: the self-test
// reports it beside the poll detection latency so a tail caused by the host is named as such.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpuoverlap {

struct CpuTimes {
  std::uint64_t busy_ticks = 0;   // user + nice + system + irq + softirq, all CPUs
  std::uint64_t steal_ticks = 0;  // all CPUs
};

// nullopt where /proc/stat is missing or unreadable (not Linux).
std::optional<CpuTimes> read_cpu_times();

// Steal over [before, after] as a fraction of busy + steal time; nullopt when nothing ran.
std::optional<double> steal_fraction(const CpuTimes& before, const CpuTimes& after);
// The same as CPU time, summed over the CPUs, in milliseconds (the kernel counts it in ticks of
// 1/USER_HZ s, 10 ms where USER_HZ is 100); nullopt when the counters went back.
std::optional<double> steal_ms(const CpuTimes& before, const CpuTimes& after);

// Interrupts served so far on one CPU, all sources summed (/proc/interrupts: device interrupts,
// the local timer, function calls, TLB shootdowns...). Each takes a pinned poller off its CPU
// for microseconds, more on a virtual machine (an exit to the hypervisor that steal does not
// count). nullopt where the file is missing (not Linux) or has no column for `cpu`.
std::optional<std::uint64_t> read_interrupts_on_cpu(int cpu);

// The same from the text of /proc/interrupts (what the reader parses; tests feed it).
std::optional<std::uint64_t> interrupts_on_cpu(std::string_view proc_interrupts, int cpu);
// /proc/interrupts' text, read once for several CPUs; nullopt where it is missing.
std::optional<std::string> read_proc_interrupts();

}  // namespace gpuoverlap
