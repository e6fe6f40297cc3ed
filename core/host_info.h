// What the results must say about the host and its threads: a verdict on non-intrusiveness
// is a statement about the OS scheduler, so meta.json names the CPU, the kernel and the
// scheduling policy each kind of thread actually ran under (read back from the thread, not
// assumed from what the code asked for).
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace gpuoverlap {

// How the kernel preempts: a thread in the kernel (a page fault, an munmap) of even the lowest
// priority keeps its CPU until it returns or yields under "none", so whether a waking game
// thread waits for a background thread depends on it.
struct KernelPreemption {
  // none | voluntary | full | lazy | rt | dynamic (the mode not readable) | none or voluntary
  // (a kernel that names no PREEMPT in its version) | "" (not known: Windows)
  std::string model;
  // Where it was read: /sys/kernel/debug/sched/preempt, /proc/config.gz, /boot/config-<release>,
  // uname -v, or why not known.
  std::string source;
};

// Which scheduler decides the fair threads' turns: with sched_ext a BPF program replaces the
// kernel's own; from Linux 6.6 the kernel's own is EEVDF (a yielding or expired thread goes
// behind the eligible one with the earliest deadline, which may be an idle-priority one,
// until the next tick), before it CFS. Its base slice decides how long a fair thread may run
// before a tick lets another in.
struct KernelScheduler {
  std::string name;                           // "EEVDF", "CFS", "sched_ext (scx_lavd)", "Windows"
  std::string source;                         // where that was read, or what it was inferred from
  std::optional<std::int64_t> base_slice_ns;  // debugfs's base_slice_ns (EEVDF) where readable
  std::string base_slice_source;              // the file read, or why not
};

struct HostInfo {
  std::string hostname;
  std::string kernel;              // "Linux 6.1.0-…", "Windows", "Wine 8.0"
  std::string kernel_version;      // uname -v: "#1 SMP PREEMPT_DYNAMIC …"; "" on Windows
  std::string machine;             // "x86_64"
  std::string cpu_model;           // "" where the platform does not say
  std::uint32_t logical_cpus = 0;  // hardware threads the OS reports; 0 when unknown
  KernelPreemption preemption;
  std::optional<std::uint32_t> tick_hz;  // CONFIG_HZ where the kernel's config is readable
  KernelScheduler scheduler;
  // Whether the CPU says it runs under a hypervisor (x86's "hypervisor" flag in
  // /proc/cpuinfo); none where the platform does not say. A virtual machine may show every
  // vCPU alone in its core although its host runs two of them on one core's hardware threads.
  std::optional<bool> virtual_machine;
};
HostInfo describe_host();

// The parts of describe_host that read text, for tests. The selected mode of
// /sys/kernel/debug/sched/preempt ("none (voluntary) full lazy" -> "voluntary"); none when
// the text names none.
std::optional<std::string> preempt_mode_selected(const std::string& debugfs_text);
// A kernel config's value of `key` ("CONFIG_HZ" -> "250"); none when absent or "not set".
std::optional<std::string> kernel_config_value(const std::string& config_text,
                                               const std::string& key);
// The preemption model a kernel's config says it boots with, `cmdline` (/proc/cmdline) giving
// a dynamic kernel's preempt=; none when the config names none.
std::optional<std::string> preemption_from_config(const std::string& config_text,
                                                  const std::string& cmdline);
// Whether /proc/cpuinfo's text has the x86 "hypervisor" flag; none when it has no "flags" line
// (not x86, or not read).
std::optional<bool> hypervisor_flag(const std::string& cpuinfo_text);
// The scheduler of a kernel `release` (uname -r: "6.1.0-28-amd64"), given the text of
// /sys/kernel/sched_ext/state and of /sys/kernel/sched_ext/root/ops ("" where absent).
KernelScheduler scheduler_of(const std::string& release, const std::string& sched_ext_state,
                             const std::string& sched_ext_ops);
// The model uname -v suggests: "rt", "dynamic", "full" or "none or voluntary".
std::string preemption_from_version(const std::string& uname_version);

// The calling thread's scheduling as the OS reports it: on Linux the policy ("SCHED_OTHER",
// "SCHED_IDLE", "SCHED_BATCH", "SCHED_FIFO", "SCHED_RR") with its nice value (the fair
// policies) or real-time priority; on Windows the thread priority's name
// ("THREAD_PRIORITY_NORMAL", "THREAD_PRIORITY_IDLE", …) and its value.
struct ThreadScheduling {
  std::string policy;
  int level = 0;           // nice (Linux fair policies), RT priority, or the Windows value
  std::string level_name;  // "nice", "rt_priority" or "priority"
  // The CPUs it may run on (cpu_affinity.h's this_thread_cpus); none where the OS cannot say.
  // Not part of operator==: pinned workers differ here by design, not by a refusal.
  std::optional<std::vector<int>> cpus;
  // Its cgroup v2 path (cgroup_idle.h); none where there is none (Windows). Part of
  // operator==: threads of one kind join one group, or the OS refused one.
  std::optional<std::string> cgroup;
  // Its slice as sched_getattr reads it (thread_policy.h, this_thread_slice_ns): EEVDF's slice
  // in force, the kernel's default or a custom one; none where not readable. Part of
  // operator==: threads of one kind ask for one slice.
  std::optional<std::uint64_t> slice_ns;
};
ThreadScheduling this_thread_scheduling();
std::string describe(const ThreadScheduling& s);  // "SCHED_IDLE, nice 0"
bool operator==(const ThreadScheduling& a, const ThreadScheduling& b);

// The scheduling one kind of thread ran under, as its threads report it when they start:
// the first report is kept, and reports that differ from it are counted (threads of one kind
// are made the same way, so a difference means the OS refused one of them something).
// Thread-safe.
class SchedulingSeen {
 public:
  void report(const ThreadScheduling& s);
  struct Seen {
    ThreadScheduling first;
    std::uint32_t threads = 0;    // reports
    std::uint32_t differing = 0;  // reports unlike the first
    // The affinities: every reported CPU, and the reports whose CPUs differ from the first's
    // (pinned workers: each on its own CPU).
    std::vector<int> cpus_of_all;
    std::uint32_t cpus_unlike_the_first = 0;
  };
  std::optional<Seen> get() const;

 private:
  mutable std::mutex mutex_;
  std::optional<Seen> seen_;
};

}  // namespace gpuoverlap
