#include <gtest/gtest.h>

#include <random>

#include "timeline/clock_conversion.h"
#include "timeline/statistics.h"

namespace gpuoverlap {
namespace {

TEST(ClockConversion, TicksAfterAndBeforeTheCalibrationPoint) {
  GpuCalibration c;
  c.gpu_ticks = 1'000'000;
  c.cpu_ns = 5'000'000'000;
  c.tick_period_ns = 1.0;
  EXPECT_EQ(gpu_ticks_to_cpu_ns(c, 1'000'500), 5'000'000'500);
  EXPECT_EQ(gpu_ticks_to_cpu_ns(c, 999'000), 4'999'999'000);
}

TEST(ClockConversion, AppliesTheTickPeriod) {
  GpuCalibration c;
  c.gpu_ticks = 100;
  c.cpu_ns = 0;
  c.tick_period_ns = 52.08;  // e.g. a 19.2 MHz counter
  EXPECT_EQ(gpu_ticks_to_cpu_ns(c, 200), 5208);
}

TEST(ClockConversion, UnwrapsACounterWithFewValidBits) {
  GpuCalibration c;
  c.valid_bits = 36;
  c.gpu_ticks = (std::uint64_t{1} << 36) - 10;  // just before the wrap
  c.cpu_ns = 1'000;
  EXPECT_EQ(gpu_ticks_to_cpu_ns(c, 5), 1'015);  // 15 ticks later, after the wrap
  // High garbage bits above the valid ones are ignored.
  EXPECT_EQ(gpu_ticks_to_cpu_ns(c, (std::uint64_t{7} << 40) | 5), 1'015);
  c.gpu_ticks = 5;
  EXPECT_EQ(gpu_ticks_to_cpu_ns(c, (std::uint64_t{1} << 36) - 10), 985);  // before, across the wrap
}

TEST(ClockConversion, MicrosecondsSinceTheGate) {
  EXPECT_DOUBLE_EQ(ns_to_us_since(1'002'500, 1'000'000), 2.5);
  EXPECT_DOUBLE_EQ(ns_to_us_since(999'000, 1'000'000), -1.0);
}

TEST(Statistics, PercentilesInterpolateLikeNumpy) {
  EXPECT_FALSE(percentile({}, 50).has_value());
  EXPECT_DOUBLE_EQ(*percentile({7}, 95), 7.0);
  EXPECT_DOUBLE_EQ(*percentile({4, 1, 3, 2}, 50), 2.5);
  // numpy.percentile([1..10], 5) == 1.45, 95 -> 9.55
  std::vector<double> ten = {10, 9, 8, 7, 6, 5, 4, 3, 2, 1};
  EXPECT_NEAR(*percentile(ten, 5), 1.45, 1e-12);
  EXPECT_NEAR(*percentile(ten, 95), 9.55, 1e-12);
  EXPECT_DOUBLE_EQ(*percentile(ten, 0), 1.0);
  EXPECT_DOUBLE_EQ(*percentile(ten, 100), 10.0);
}

// A leave-one-out percentile without copying: the same as percentile() of what is left,
// duplicates included.
TEST(Statistics, PercentileWithoutSomeValuesIsThePercentileOfTheRest) {
  std::vector<double> all, removed, rest;
  for (int i = 0; i < 300; ++i) {
    const double v = (i * 37) % 101 + (i % 3 == 0 ? 0.5 : 0.0);  // repeats some values
    all.push_back(v);
    (i % 4 == 0 ? removed : rest).push_back(v);
  }
  std::sort(all.begin(), all.end());
  std::sort(removed.begin(), removed.end());
  for (double p : {0.0, 50.0, 95.0, 99.0, 100.0})
    EXPECT_DOUBLE_EQ(*percentile_without(all, removed, p), *percentile(rest, p)) << p;
  EXPECT_DOUBLE_EQ(*percentile_without(all, {}, 99), *percentile(all, 99));
  EXPECT_FALSE(percentile_without(removed, removed, 99)) << "nothing left";
}

// Wilson's score interval against values computed by hand (z = 1.959964).
TEST(Statistics, WilsonIntervalOfAShare) {
  const ShareInterval half = wilson_interval(1, 2);
  EXPECT_NEAR(half.low, 0.0945, 1e-4);
  EXPECT_NEAR(half.high, 0.9055, 1e-4);
  const ShareInterval none = wilson_interval(0, 20);
  EXPECT_EQ(none.low, 0.0) << "never below 0";
  EXPECT_NEAR(none.high, 0.1611, 1e-4) << "and not empty at 0 hits";
  const ShareInterval all = wilson_interval(20, 20);
  EXPECT_NEAR(all.low, 0.8389, 1e-4);
  EXPECT_EQ(all.high, 1.0);
  const ShareInterval many = wilson_interval(300, 1000);
  EXPECT_NEAR(many.low, 0.2724, 1e-4);
  EXPECT_NEAR(many.high, 0.3291, 1e-4);
}

TEST(Statistics, PercentileIntervalFromOrderStatistics) {
  std::vector<double> ranks(1000);
  for (std::size_t i = 0; i < ranks.size(); ++i) ranks[i] = double(ranks.size() - i);  // 1000..1
  // Binomial(1000, 0.99): the p99 lies between the 983rd and 997th smallest at 95 %.
  const PercentileInterval p99 = percentile_interval(ranks, 99);
  EXPECT_EQ(p99.low, 983.0);
  EXPECT_EQ(p99.high, 997.0);
  // 60 values cannot bound a p99 from above (the max is below it with probability 0.55).
  const PercentileInterval small = percentile_interval(std::vector<double>(60, 1.0), 99);
  EXPECT_TRUE(small.low.has_value());
  EXPECT_FALSE(small.high.has_value());
  EXPECT_FALSE(percentile_interval({}, 50).low.has_value());
}

// The interval's promise, checked by simulation: it holds the true p99 of Uniform(0, 1) in at
// least 95 % of samples (seeded, so the test is deterministic).
TEST(Statistics, PercentileIntervalCoversTheTruePercentile) {
  std::mt19937 random(7);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  int covered = 0;
  const int trials = 400;
  for (int t = 0; t < trials; ++t) {
    std::vector<double> sample(500);
    for (double& v : sample) v = uniform(random);
    const PercentileInterval ci = percentile_interval(sample, 99);
    ASSERT_TRUE(ci.low && ci.high);
    covered += (*ci.low <= 0.99 && 0.99 <= *ci.high) ? 1 : 0;
  }
  EXPECT_GE(covered, trials * 95 / 100 - 4);  // 95 % less the simulation's own noise
}

}  // namespace
}  // namespace gpuoverlap

#include <unistd.h>

#include "core/cpu_affinity.h"
#include "core/cpu_steal.h"

namespace gpuoverlap {
namespace {

TEST(CpuSteal, FractionOfBusyAndStolenTime) {
  EXPECT_DOUBLE_EQ(*steal_fraction({100, 10}, {190, 20}), 10.0 / 100.0);
  EXPECT_FALSE(steal_fraction({100, 10}, {100, 10}).has_value());  // nothing ran
  EXPECT_FALSE(steal_fraction({100, 10}, {90, 10}).has_value());   // counters went back
  // As time: ticks of 1/USER_HZ s.
  const double tick_ms = 1000.0 / static_cast<double>(sysconf(_SC_CLK_TCK));
  EXPECT_DOUBLE_EQ(*steal_ms({100, 10}, {190, 13}), 3 * tick_ms);
  EXPECT_FALSE(steal_ms({100, 10}, {190, 9}).has_value());
  // On Linux /proc/stat exists and its counters only grow.
  const auto a = read_cpu_times();
  ASSERT_TRUE(a.has_value());
  const auto b = read_cpu_times();
  ASSERT_TRUE(b.has_value());
  EXPECT_GE(b->busy_ticks, a->busy_ticks);
  EXPECT_GE(b->steal_ticks, a->steal_ticks);
}

// /proc/interrupts: a header of CPU columns, then a line per source with a count per CPU;
// ERR and MIS have one total and are not a CPU's; offline CPUs have no column.
TEST(CpuInterrupts, OneCpusColumnSummedOverEverySource) {
  const std::string text =
      "           CPU0       CPU1       CPU3\n"
      "  0:         44          0          0   IO-APIC    2-edge      timer\n"
      " 24:          5        700         10   PCI-MSI 65536-edge      nvme0q0\n"
      "LOC:      20000      30000      40000   Local timer interrupts\n"
      "CAL:        100        200        300   Function call interrupts\n"
      "ERR:          7\n"
      "MIS:          0\n";
  EXPECT_EQ(interrupts_on_cpu(text, 0), 44u + 5 + 20000 + 100);
  EXPECT_EQ(interrupts_on_cpu(text, 1), 0u + 700 + 30000 + 200);
  EXPECT_EQ(interrupts_on_cpu(text, 3), 0u + 10 + 40000 + 300) << "the third column is CPU3";
  EXPECT_FALSE(interrupts_on_cpu(text, 2)) << "offline: no column";
  EXPECT_FALSE(interrupts_on_cpu(text, -1));
  EXPECT_FALSE(interrupts_on_cpu("", 0));
  // On Linux the first CPU of the mask has a column, and its count only grows.
  const auto before = read_interrupts_on_cpu(usable_cpu_ids().front());
  ASSERT_TRUE(before.has_value());
  EXPECT_GE(*read_interrupts_on_cpu(usable_cpu_ids().front()), *before);
}

}  // namespace
}  // namespace gpuoverlap

#include <pthread.h>
#include <sched.h>

#include <thread>

#include "core/host_info.h"

namespace gpuoverlap {
namespace {

TEST(HostInfo, NamesTheCpuAndTheKernel) {
  const HostInfo host = describe_host();
  EXPECT_FALSE(host.hostname.empty());
  EXPECT_EQ(host.kernel.rfind("Linux ", 0), 0u) << host.kernel;
  EXPECT_GT(host.logical_cpus, 0u);
  // Every Linux /proc/cpuinfo this project runs on (x86-64, arm64 with a model line) names it.
  EXPECT_FALSE(host.cpu_model.empty());
}

// The kernel's preemption model, which decides whether a waking game thread can take its CPU
// back from a background thread in the kernel: named with where it was read.
TEST(HostInfo, NamesTheKernelsPreemptionModelAndWhereItWasRead) {
  const HostInfo host = describe_host();
  EXPECT_FALSE(host.kernel_version.empty());
  EXPECT_FALSE(host.preemption.model.empty());
  EXPECT_FALSE(host.preemption.source.empty());
  for (const char* model :
       {"none", "voluntary", "full", "lazy", "rt", "dynamic", "none or voluntary"})
    if (host.preemption.model == model) return;
  ADD_FAILURE() << host.preemption.model << " from " << host.preemption.source;
}

TEST(HostInfo, ReadsTheHypervisorFlagAsAWholeWord) {
  EXPECT_EQ(hypervisor_flag("processor\t: 0\nflags\t\t: fpu vme hypervisor lahf_lm\n"), true);
  EXPECT_EQ(hypervisor_flag("flags\t\t: fpu vme hypervisor\n"), true);
  EXPECT_EQ(hypervisor_flag("flags\t\t: fpu vme hypervisorx lahf_lm\n"), false);
  EXPECT_EQ(hypervisor_flag("flags\t\t: fpu vme\n"), false);
  EXPECT_EQ(hypervisor_flag("processor\t: 0\nFeatures\t: fp asimd\n"), std::nullopt)
      << "ARM names no such flag";
}

TEST(HostInfo, ReadsThePreemptionModelFromEachSource) {
  EXPECT_EQ(preempt_mode_selected("none (voluntary) full lazy\n"), "voluntary");
  EXPECT_EQ(preempt_mode_selected("(none) voluntary full"), "none");
  EXPECT_FALSE(preempt_mode_selected(""));
  EXPECT_FALSE(preempt_mode_selected("none voluntary full"));
  const std::string dynamic_none =
      "CONFIG_HZ_250=y\nCONFIG_HZ=250\nCONFIG_PREEMPT_NONE=y\n# CONFIG_PREEMPT is not set\n"
      "CONFIG_PREEMPT_DYNAMIC=y\n";
  EXPECT_EQ(kernel_config_value(dynamic_none, "CONFIG_HZ"), "250");
  EXPECT_FALSE(kernel_config_value(dynamic_none, "CONFIG_PREEMPT")) << "'is not set' is absent";
  EXPECT_EQ(preemption_from_config(dynamic_none, "root=/dev/vda quiet"), "none")
      << "a dynamic kernel boots with its configured default";
  EXPECT_EQ(preemption_from_config(dynamic_none, "root=/dev/vda preempt=full quiet"), "full");
  EXPECT_EQ(preemption_from_config("CONFIG_PREEMPT_RT=y\nCONFIG_PREEMPT=y\n", ""), "rt");
  EXPECT_EQ(preemption_from_config("CONFIG_PREEMPT_VOLUNTARY=y\n", ""), "voluntary");
  EXPECT_FALSE(preemption_from_config("", ""));
  EXPECT_EQ(preemption_from_version("#1 SMP PREEMPT_DYNAMIC Debian 6.1.158-1"), "dynamic");
  EXPECT_EQ(preemption_from_version("#1 SMP PREEMPT_RT Fri"), "rt");
  EXPECT_EQ(preemption_from_version("#1 SMP PREEMPT Fri"), "full");
  EXPECT_EQ(preemption_from_version("#1 SMP Fri"), "none or voluntary");
}

TEST(HostInfo, TheSchedulerIsSchedExtWhereEnabledElseEevdfFromLinux66) {
  EXPECT_EQ(scheduler_of("6.1.0-28-amd64", "", "").name, "CFS");
  EXPECT_EQ(scheduler_of("6.6.0", "", "").name, "EEVDF");
  EXPECT_EQ(scheduler_of("6.18.44-fc", "disabled\n", "").name, "EEVDF");
  EXPECT_NE(scheduler_of("6.18.44-fc", "disabled\n", "").source.find("sched_ext disabled"),
            std::string::npos);
  EXPECT_EQ(scheduler_of("7.0.1", "", "").name, "EEVDF");
  EXPECT_EQ(scheduler_of("6.12.3", "enabled\n", "scx_lavd\n").name, "sched_ext (scx_lavd)");
  EXPECT_EQ(scheduler_of("garbage", "", "").name, "");
  // The machine's own reads back a name, and where its slice is not readable, why.
  const HostInfo host = describe_host();
  EXPECT_FALSE(host.scheduler.name.empty()) << host.scheduler.source;
  EXPECT_FALSE(host.scheduler.base_slice_source.empty());
}

TEST(HostInfo, ReadsBackTheThreadsOwnPolicy) {
  const ThreadScheduling normal = this_thread_scheduling();
  EXPECT_EQ(normal.policy, "SCHED_OTHER");
  EXPECT_EQ(normal.level_name, "nice");
  // A thread that lowered itself to SCHED_IDLE (no privilege needed) reads it back; its
  // policy is its own, not the process's.
  ThreadScheduling lowered;
  std::thread t([&] {
    sched_param param{};
    ASSERT_EQ(pthread_setschedparam(pthread_self(), SCHED_IDLE, &param), 0);
    lowered = this_thread_scheduling();
  });
  t.join();
  EXPECT_EQ(lowered.policy, "SCHED_IDLE");
  EXPECT_EQ(this_thread_scheduling(), normal);
  EXPECT_EQ(describe(lowered), "SCHED_IDLE, nice " + std::to_string(lowered.level));
}

TEST(HostInfo, SchedulingSeenKeepsTheFirstAndCountsTheOthers) {
  SchedulingSeen seen;
  EXPECT_FALSE(seen.get().has_value());
  const ThreadScheduling idle{"SCHED_IDLE", 0, "nice"}, other{"SCHED_OTHER", 0, "nice"};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) threads.emplace_back([&] { seen.report(idle); });
  for (std::thread& t : threads) t.join();
  seen.report(other);
  const auto got = seen.get();
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->first, idle);
  EXPECT_EQ(got->threads, 9u);
  EXPECT_EQ(got->differing, 1u);
  EXPECT_EQ(got->cpus_unlike_the_first, 0u) << "none of the reports named CPUs";
}

// The affinity a thread reads back is its own, narrowed by pinning, and it is not scheduling:
// pinned workers (one CPU each) count as unlike the first in their CPUs only.
TEST(HostInfo, EachThreadReadsBackItsOwnAffinity) {
  EXPECT_EQ(describe_cpus({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  EXPECT_EQ(describe_cpus({5}), "5");
  EXPECT_EQ(describe_cpus({}), "");
  const std::vector<int> usable = usable_cpu_ids();
  ASSERT_FALSE(usable.empty());
  const ThreadScheduling here = this_thread_scheduling();
  ASSERT_TRUE(here.cpus.has_value()) << "Linux reads a thread's affinity";
  EXPECT_EQ(*here.cpus, usable);
  SchedulingSeen seen;
  std::vector<std::thread> threads;
  for (const int cpu : usable)
    threads.emplace_back([&seen, cpu] {
      ASSERT_TRUE(pin_current_thread(cpu));
      seen.report(this_thread_scheduling());
    });
  for (std::thread& t : threads) t.join();
  const auto got = seen.get();
  ASSERT_TRUE(got.has_value());
  ASSERT_TRUE(got->first.cpus.has_value());
  EXPECT_EQ(got->first.cpus->size(), 1u) << "pinned to one CPU";
  EXPECT_EQ(got->differing, 0u) << "the same policy everywhere";
  EXPECT_EQ(got->cpus_unlike_the_first, usable.size() - 1);
  EXPECT_EQ(got->cpus_of_all, usable);
  EXPECT_EQ(this_thread_scheduling().cpus, here.cpus) << "the other threads' pinning is theirs";
}

}  // namespace
}  // namespace gpuoverlap
