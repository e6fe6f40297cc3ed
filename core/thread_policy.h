// How a background thread asks the OS to schedule it, as the runtimes that ship background
// compilers do (docs/background.md, "Background scheduling policies"):
//   idle          Linux SCHED_IDLE (the D3D12 background-processing spec's choice, DXVK's);
//                 Windows THREAD_PRIORITY_IDLE
//   batch-nice19  Linux SCHED_BATCH at nice 19 (Mesa's util_queue, Steam's Fossilize)
//   nice19        Linux SCHED_OTHER at nice 19
//   background    Windows THREAD_MODE_BACKGROUND_BEGIN (low CPU, I/O and memory priority)
//   eco           Windows EcoQoS (ThreadPowerThrottling, execution speed throttled)
//   normal        what the creating thread had (no change)
// A thread applies a policy to itself once, before taking work; none of these needs a
// privilege, and none can be undone without one on Linux (nice only goes up).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/enum_names.h"
#include "core/result.h"

namespace gpuoverlap {

enum class ThreadPolicy { idle, batch_nice19, nice19, background, eco, normal };

inline constexpr EnumNames<ThreadPolicy, 6> kThreadPolicyNames{
    {{ThreadPolicy::idle, "idle"},
     {ThreadPolicy::batch_nice19, "batch-nice19"},
     {ThreadPolicy::nice19, "nice19"},
     {ThreadPolicy::background, "background"},
     {ThreadPolicy::eco, "eco"},
     {ThreadPolicy::normal, "normal"}}};

inline std::string_view to_string(ThreadPolicy policy) {
  return name_of(kThreadPolicyNames, policy);
}
inline std::optional<ThreadPolicy> parse_thread_policy(std::string_view text) {
  return value_of(kThreadPolicyNames, text);
}

// The policies this OS has, in kThreadPolicyNames' order.
std::vector<ThreadPolicy> thread_policies_here();
bool available_here(ThreadPolicy policy);

// Applies `policy` to the calling thread. An Error names the call the OS refused and why
// (e.g. a policy of the other OS, or a seccomp filter that forbids sched_setscheduler).
Status apply_to_this_thread(ThreadPolicy policy);

// What this OS does with `policy`: applied on a thread made for the purpose, which then reads
// its scheduling back (host_info.h's describe, and for `eco` whether EcoQoS is on), or the
// OS's refusal. The thread has ended when this returns. Never changes the calling thread.
struct PolicyProbe {
  ThreadPolicy policy = ThreadPolicy::normal;
  std::optional<std::string> refused;  // the OS's refusal; none: applied
  std::string read_back;               // "SCHED_BATCH, nice 19"; after a refusal, what it kept
};
PolicyProbe probe_policy(ThreadPolicy policy);

// Names the calling thread as `top -H`, perf, a scheduler trace and a debugger show it (Linux:
// at most 15 characters, longer names cut; Windows: SetThreadDescription where the system has
// it). A name the OS refuses leaves the thread as it was: naming is never a failure.
void name_this_thread(const char* name);

// EEVDF's custom slice (Linux 6.12 and later): a fair thread may ask for its own slice, 0.1 to
// 100 ms, through sched_setattr's sched_runtime. A shorter slice makes its deadline earlier,
// so that it runs sooner after it wakes (PREEMPT_SHORT) and is preempted sooner. Earlier
// kernels accept the call and ignore the value, so a slice counts only where it reads back.
inline constexpr std::uint64_t kMinCustomSliceNs = 100'000;
inline constexpr std::uint64_t kMaxCustomSliceNs = 100'000'000;
// Asks for `slice_ns` (0: the kernel's default again) on the calling thread, keeping its policy
// and nice; returns the slice read back, or why none is.
Result<std::uint64_t> set_this_thread_slice_ns(std::uint64_t slice_ns);
// The calling thread's slice as sched_getattr reads it (the fair class's slice in force on
// Linux 6.12+, 0 before); none where it cannot be read (Windows).
std::optional<std::uint64_t> this_thread_slice_ns();
// Why this host takes no custom slice ("" where it does): probed once, on a thread of its own.
const std::string& custom_slice_unsupported_reason();

}  // namespace gpuoverlap
