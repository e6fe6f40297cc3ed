// The kernel's scheduling record (schedtrace/): the parser on a record taken on a loaded
// 2-core machine and on made-up lines, and the attribution of every wait it explains.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <tuple>

#include "analysis/results.h"
#include "engine/sched_attribution.h"
#include "schedtrace/sched_record.h"
#include "schedtrace/thread_waits.h"
#include "timeline/export.h"

namespace gpuoverlap {
namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(GPUOVERLAP_SOURCE_DIR) + "/tests/data/sched/" + name);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// One made-up line in tracefs's text form.
std::string line(const std::string& task, int tgid, int cpu, const std::string& flags,
                 const std::string& seconds, const std::string& event, const std::string& body) {
  return "  " + task + " (" + std::to_string(tgid) + ") [00" + std::to_string(cpu) + "] " + flags +
         " " + seconds + ": " + event + ": " + body + "\n";
}

std::string switch_body(const std::string& prev, int prev_pid, char state, const std::string& next,
                        int next_pid, int next_prio = 120) {
  return "prev_comm=" + prev + " prev_pid=" + std::to_string(prev_pid) +
         " prev_prio=120 prev_state=" + std::string(1, state) + " ==> next_comm=" + next +
         " next_pid=" + std::to_string(next_pid) + " next_prio=" + std::to_string(next_prio);
}

const WaitOptions kProcess100{100, nullptr};

TEST(SchedRecord, ParsesARecordOfTwoProcessesOnTwoLoadedCores) {
  const SchedRecord record = parse_sched_record(fixture("lavapipe-two-processes.trace"));
  EXPECT_EQ(record.unreadable_lines, 0);
  EXPECT_TRUE(record.lost_events_by_cpu.empty());
  ASSERT_GT(record.events.size(), 500u);
  for (std::size_t i = 1; i < record.events.size(); ++i)
    ASSERT_LE(record.events[i - 1].time_ns, record.events[i].time_ns);
  // A comm with a space, read whole, and the µs timestamp in ns.
  bool compile_named = false;
  for (const SchedEvent& e : record.events)
    if (e.kind == SchedEventKind::switch_task && e.prev_comm == "compile 0") compile_named = true;
  EXPECT_TRUE(compile_named);
  EXPECT_EQ(record.events.front().time_ns % 1000, 0);
}

TEST(ThreadWaits, AWakeUpFromAnotherCpuPreemptsTheFrameLoopBeforeItsIpiLands) {
  // At 10763.347464 a thread of another process on CPU 0 (llvmpipe-1) woke llvmpipe-0 onto CPU
  // 1, where the frame loop (8177) ran; the frame loop was switched out at .347472, before the
  // reschedule IPI landed (.347481), and came back at .347484 when llvmpipe-0 slept.
  const SchedRecord record = parse_sched_record(fixture("lavapipe-two-processes.trace"));
  const WaitOptions options{8177, nullptr};
  const auto waits = thread_waits(record, {8177}, 10763'347'000'000, 10763'348'000'000, options);
  const ThreadWait* found = nullptr;
  for (const ThreadWait& w : waits)
    if (w.off_ns == 10763'347'472'000) found = &w;
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->lost_by, LostBy::woken_thread);
  EXPECT_EQ(found->holder, "llvmpipe-0-8171");
  EXPECT_EQ(found->holder_kind, ThreadKind::other_process);
  EXPECT_EQ(found->given_back_by, GivenBackBy::holder_blocked);
  EXPECT_EQ(found->runnable_ns(), 12'000);
  EXPECT_EQ(found->cpu_out, 1);
  EXPECT_EQ(found->cpu_in, 1);
}

// The index's totals over many intervals equal a sum over every wait, on a real record: the
// frame intervals' columns do not depend on how the waits are found.
TEST(WaitIndex, TotalsOverAnyIntervalEqualASumOverEveryWait) {
  const SchedRecord record = parse_sched_record(fixture("lavapipe-two-processes.trace"));
  ASSERT_FALSE(record.events.empty());
  std::set<std::int32_t> tids;
  for (const SchedEvent& e : record.events)
    if (e.kind == SchedEventKind::switch_task && e.tgid == 8177) tids.insert(e.prev_tid);
  ASSERT_GT(tids.size(), 2u);
  const std::int64_t first_ns = record.events.front().time_ns;
  const std::int64_t last_ns = record.events.back().time_ns;
  const auto waits = thread_waits(record, tids, first_ns, last_ns, WaitOptions{8177, nullptr});
  ASSERT_GT(waits.size(), 50u);
  const WaitIndex index(waits);
  std::int64_t runnable_seen_ns = 0;
  for (const std::int64_t step_ns : {std::int64_t{250'000}, std::int64_t{4'000'000}})
    for (const std::int32_t tid : tids)
      for (std::int64_t from_ns = first_ns; from_ns < last_ns; from_ns += step_ns) {
        const std::int64_t to_ns = from_ns + step_ns;
        std::int64_t runnable_ns = 0, blocked_ns = 0;
        for (const ThreadWait& w : waits)
          if (w.tid == tid && w.on_ns >= from_ns && w.off_ns < to_ns) {
            runnable_ns += w.runnable_ns_in(from_ns, to_ns);
            blocked_ns += std::max<std::int64_t>(
                0, std::min(w.runnable_from_ns, to_ns) - std::max(w.off_ns, from_ns));
          }
        const WaitTotals totals = index.totals(tid, from_ns, to_ns);
        ASSERT_EQ(totals.runnable_ns, runnable_ns) << tid << " at " << from_ns;
        ASSERT_EQ(totals.blocked_ns, blocked_ns) << tid << " at " << from_ns;
        ASSERT_EQ(totals.to_background_ns + totals.to_frame_threads_ns +
                      totals.to_other_processes_ns + totals.to_kernel_ns + totals.wake_latency_ns,
                  totals.runnable_ns);
        runnable_seen_ns += runnable_ns;
      }
  EXPECT_GT(runnable_seen_ns, 0);
}

TEST(ThreadWaits, AYieldBehindAnIdleSpinnerWaitsUntilTheTick) {
  std::string text;
  text += line("gpuoverlap-100", 100, 0, "d..2.", "10.000100", "sched_switch",
               switch_body("x", 5, 'S', "gpuoverlap", 100));
  text +=
      line("gpuoverlap-100", 100, 0, ".....", "10.000200", "sys_enter", "NR 24 (0, 0, 0, 0, 0, 0)");
  text += line("gpuoverlap-100", 100, 0, "d..2.", "10.000210", "sched_switch",
               switch_body("gpuoverlap", 100, 'R', "spinner", 103));
  text += line("spinner-103", 100, 0, "d.h1.", "10.004000", "local_timer_entry", "vector=236");
  text += line("spinner-103", 100, 0, "d..2.", "10.004010", "sched_switch",
               switch_body("spinner", 103, 'R', "gpuoverlap", 100));
  const auto waits =
      thread_waits(parse_sched_record(text), {100}, 10'000'000'000, 11'000'000'000, kProcess100);
  ASSERT_EQ(waits.size(), 1u);
  EXPECT_EQ(waits[0].lost_by, LostBy::yielded);
  EXPECT_EQ(waits[0].holder_kind, ThreadKind::background);
  EXPECT_EQ(waits[0].given_back_by, GivenBackBy::tick);
  EXPECT_EQ(waits[0].runnable_ns(), 3'800'000);
  EXPECT_EQ(describe(waits[0]),
            "spinner-103 (background) held its CPU 3.80 ms after it yielded, until the next tick");
}

// The kernel does not write every switch (a 6.18 VM kernel omitted about half of those from the
// idle task): a thread's first line on its CPU ends its wait, and its next wait is its own.
TEST(ThreadWaits, AThreadSeenRunningWithoutASwitchFromIdleRanFromItsWakeUp) {
  std::string text;
  text += line("gpuoverlap-100", 100, 0, "d..2.", "10.000100", "sched_switch",
               switch_body("gpuoverlap", 100, 'S', "swapper/0", 0));
  text += line("<idle>-0", -1, 0, "dNh2.", "10.001000", "sched_wakeup",
               "comm=gpuoverlap pid=100 prio=120 target_cpu=000");
  // No switch from the idle task: the thread's own system call is the first sign it runs.
  text +=
      line("gpuoverlap-100", 100, 0, ".....", "10.001050", "sys_enter", "NR 24 (0, 0, 0, 0, 0, 0)");
  text += line("gpuoverlap-100", 100, 0, "d..2.", "10.002000", "sched_switch",
               switch_body("gpuoverlap", 100, 'S', "swapper/0", 0));
  text += line("<idle>-0", -1, 0, "dNh2.", "10.003000", "sched_wakeup",
               "comm=gpuoverlap pid=100 prio=120 target_cpu=000");
  text += line("<idle>-0", -1, 0, "d..2.", "10.003010", "sched_switch",
               switch_body("swapper/0", 0, 'R', "gpuoverlap", 100));
  const auto waits =
      thread_waits(parse_sched_record(text), {100}, 10'000'000'000, 11'000'000'000, kProcess100);
  ASSERT_EQ(waits.size(), 2u);
  EXPECT_EQ(waits[0].off_ns, 10'000'100'000);
  EXPECT_EQ(waits[0].runnable_from_ns, 10'001'000'000);
  // Woken onto a CPU idle since before its wake-up: it ran from the wake-up, not from its
  // first line.
  EXPECT_EQ(waits[0].on_ns, 10'001'000'000);
  EXPECT_EQ(waits[0].runnable_ns(), 0);
  EXPECT_TRUE(waits[0].switch_unrecorded);
  EXPECT_EQ(waits[0].given_back_by, GivenBackBy::idle_cpu);
  EXPECT_EQ(waits[1].off_ns, 10'002'000'000);
  EXPECT_EQ(waits[1].on_ns, 10'003'010'000);
  EXPECT_FALSE(waits[1].switch_unrecorded);

  // Woken while another thread ran, which then went idle (switch recorded) before the woken
  // thread's first line: it waited until the CPU went idle, no longer.
  std::string later;
  later += line("gpuoverlap-100", 100, 0, "d..2.", "10.000100", "sched_switch",
                switch_body("gpuoverlap", 100, 'S', "other", 200));
  later += line("other-200", 200, 0, "dNh2.", "10.001000", "sched_wakeup",
                "comm=gpuoverlap pid=100 prio=120 target_cpu=000");
  later += line("other-200", 200, 0, "d..2.", "10.001400", "sched_switch",
                switch_body("other", 200, 'S', "swapper/0", 0));
  later += line("gpuoverlap-100", 100, 0, "d.h1.", "10.004000", "local_timer_entry", "vector=236");
  const auto after_idle =
      thread_waits(parse_sched_record(later), {100}, 10'000'000'000, 11'000'000'000, kProcess100);
  ASSERT_EQ(after_idle.size(), 1u);
  EXPECT_EQ(after_idle[0].on_ns, 10'001'400'000);
  EXPECT_EQ(after_idle[0].runnable_ns(), 400'000);
}

// A thread whose only line on its CPU is its own switch away was running there for an unknown
// time: its wait is kept but claims no runnable part (it ends at its wake-up), and the wait the
// switch opens is a new one. Without a recorded wake-up, nothing past its start is known.
TEST(ThreadWaits, AThreadWhoseOnlyLineIsItsSwitchAwayClaimsNoRunnableTime) {
  std::string text;
  text += line("gpuoverlap-100", 100, 0, "d..2.", "10.000100", "sched_switch",
               switch_body("gpuoverlap", 100, 'S', "swapper/0", 0));
  text += line("<idle>-0", -1, 0, "dNh2.", "10.001000", "sched_wakeup",
               "comm=gpuoverlap pid=100 prio=120 target_cpu=000");
  // No switch from the idle task and no line of its own until it is switched away.
  text += line("gpuoverlap-100", 100, 0, "d..2.", "10.002000", "sched_switch",
               switch_body("gpuoverlap", 100, 'R', "spinner", 103));
  text += line("spinner-103", 100, 0, "d.h1.", "10.004000", "local_timer_entry", "vector=236");
  text += line("spinner-103", 100, 0, "d..2.", "10.004010", "sched_switch",
               switch_body("spinner", 103, 'R', "gpuoverlap", 100));
  const auto waits =
      thread_waits(parse_sched_record(text), {100}, 10'000'000'000, 11'000'000'000, kProcess100);
  ASSERT_EQ(waits.size(), 2u);
  EXPECT_EQ(waits[0].off_ns, 10'000'100'000);
  EXPECT_EQ(waits[0].runnable_from_ns, 10'001'000'000);
  EXPECT_EQ(waits[0].on_ns, 10'001'000'000);
  EXPECT_EQ(waits[0].runnable_ns(), 0);
  EXPECT_TRUE(waits[0].switch_unrecorded);
  EXPECT_EQ(waits[1].off_ns, 10'002'000'000);
  EXPECT_EQ(waits[1].on_ns, 10'004'010'000);
  EXPECT_EQ(waits[1].holder, "spinner-103");
  EXPECT_EQ(waits[1].given_back_by, GivenBackBy::tick);

  // No wake-up in the record either: the first wait is dropped, not stretched to the switch.
  std::string unwoken;
  unwoken += line("gpuoverlap-100", 100, 0, "d..2.", "10.000100", "sched_switch",
                  switch_body("gpuoverlap", 100, 'S', "swapper/0", 0));
  unwoken += line("gpuoverlap-100", 100, 0, "d..2.", "10.002000", "sched_switch",
                  switch_body("gpuoverlap", 100, 'S', "swapper/0", 0));
  const auto none =
      thread_waits(parse_sched_record(unwoken), {100}, 10'000'000'000, 11'000'000'000, kProcess100);
  EXPECT_TRUE(none.empty());
}

// The idle task's own lines (an interrupt on an idle CPU) say the CPU went idle when the
// kernel wrote no switch to it: a thread woken there waited behind no one.
TEST(ThreadWaits, AnIdleTaskLineAfterAnUnrecordedSwitchMakesTheCpuIdle) {
  std::string text;
  text += line("gpuoverlap-100", 100, 0, "d..2.", "10.000100", "sched_switch",
               switch_body("gpuoverlap", 100, 'S', "spinner", 103));
  // The spinner blocks; its switch to the idle task is missing.
  text += line("<idle>-0", -1, 0, "d.h1.", "10.001000", "local_timer_entry", "vector=236");
  text += line("<idle>-0", -1, 0, "dNh2.", "10.002000", "sched_wakeup",
               "comm=gpuoverlap pid=100 prio=120 target_cpu=000");
  text += line("<idle>-0", -1, 0, "d..2.", "10.002010", "sched_switch",
               switch_body("swapper/0", 0, 'R', "gpuoverlap", 100));
  const auto waits =
      thread_waits(parse_sched_record(text), {100}, 10'000'000'000, 11'000'000'000, kProcess100);
  ASSERT_EQ(waits.size(), 1u);
  EXPECT_EQ(waits[0].holder_kind, ThreadKind::idle);
  EXPECT_EQ(waits[0].holder, "idle");
  EXPECT_EQ(waits[0].given_back_by, GivenBackBy::idle_cpu);
  EXPECT_EQ(waits[0].runnable_ns(), 10'000);
}

TEST(ThreadWaits, ABlockedThreadWokenByABackgroundThreadThatWaitedIsAPriorityInversion) {
  std::string text;
  // compile 0 (103) is preempted on CPU 1 at 10.000100 and runs again at 10.002100: it waited
  // 2 ms for a CPU. The frame loop blocks at 10.001000 and compile 0 wakes it at 10.003000
  // onto the idle CPU 0, where it runs at 10.003050.
  text += line("compile 0-103", 100, 1, "d..2.", "10.000100", "sched_switch",
               switch_body("compile 0", 103, 'R', "other", 7));
  text += line("gpuoverlap-100", 100, 0, "d..2.", "10.001000", "sched_switch",
               switch_body("gpuoverlap", 100, 'S', "swapper/0", 0));
  text += line("other-7", 7, 1, "d..2.", "10.002100", "sched_switch",
               switch_body("other", 7, 'S', "compile 0", 103));
  text += line("compile 0-103", 100, 1, "d..3.", "10.003000", "sched_wakeup",
               "comm=gpuoverlap pid=100 prio=120 target_cpu=000");
  text += line("<idle>-0", 0, 0, "d..2.", "10.003050", "sched_switch",
               switch_body("swapper/0", 0, 'R', "gpuoverlap", 100));
  const auto waits =
      thread_waits(parse_sched_record(text), {100}, 10'000'000'000, 11'000'000'000, kProcess100);
  ASSERT_EQ(waits.size(), 1u);
  const ThreadWait& w = waits[0];
  EXPECT_EQ(w.lost_by, LostBy::blocked);
  EXPECT_EQ(w.waker, "compile 0-103");
  EXPECT_EQ(w.waker_kind, ThreadKind::background);
  EXPECT_EQ(w.waker_waited_ns, 2'000'000);
  EXPECT_TRUE(w.priority_inversion());
  EXPECT_EQ(w.holder_kind, ThreadKind::idle);
  EXPECT_EQ(w.given_back_by, GivenBackBy::idle_cpu);
  EXPECT_EQ(w.runnable_ns(), 50'000);
  const WaitIndex index(waits);
  const WaitTotals totals = index.totals(100, 10'000'000'000, 11'000'000'000);
  EXPECT_EQ(totals.wake_latency_ns, 50'000);
  EXPECT_EQ(totals.blocked_on_background_ns, 2'000'000);
  // Clipped to an interval that ends inside the runnable part.
  EXPECT_EQ(index.totals(100, 10'000'000'000, 10'003'020'000).runnable_ns, 20'000);
}

TEST(ThreadWaits, ATickTheRunningThreadSawThenAWakeUpItMadeIsAWokenThreadsPreemption) {
  std::string text;
  text += line("gpuoverlap-100", 100, 0, "d..2.", "10.000100", "sched_switch",
               switch_body("x", 5, 'S', "gpuoverlap", 100));
  text += line("gpuoverlap-100", 100, 0, "d.h1.", "10.000200", "local_timer_entry", "vector=236");
  text += line("gpuoverlap-100", 100, 0, "d..3.", "10.000300", "sched_wakeup",
               "comm=worker 1 pid=104 prio=120 target_cpu=000");
  text += line("gpuoverlap-100", 100, 0, "d..2.", "10.000310", "sched_switch",
               switch_body("gpuoverlap", 100, 'R', "worker 1", 104));
  text += line("worker 1-104", 100, 0, "d..2.", "10.000500", "sched_switch",
               switch_body("worker 1", 104, 'S', "gpuoverlap", 100));
  const auto waits =
      thread_waits(parse_sched_record(text), {100}, 10'000'000'000, 11'000'000'000, kProcess100);
  ASSERT_EQ(waits.size(), 1u);
  EXPECT_EQ(waits[0].lost_by, LostBy::woken_thread);
  EXPECT_EQ(waits[0].holder_kind, ThreadKind::frame_thread);
  EXPECT_EQ(waits[0].given_back_by, GivenBackBy::holder_blocked);
}

TEST(SchedRecord, LostEventsAndDamageAreReportedNotGuessedOver) {
  std::string text = "# tracer: nop\n";
  text += line("gpuoverlap-100", 100, 0, "d..2.", "10.000100", "sched_switch",
               switch_body("gpuoverlap", 100, 'R', "kworker/0:1", 9));
  text += "CPU:0 [LOST 17 EVENTS]\n";
  text += "this is no line of a trace\n";
  text += line("gpuoverlap-100", 100, 0, "d..2.", "10.000x00", "sched_switch", "garbage");
  text += line("kworker/0:1-9", 0, 0, "d..2.", "10.000900", "sched_switch",
               switch_body("kworker/0:1", 9, 'I', "gpuoverlap", 100));
  // An event the attribution does not read: skipped, not damage.
  text += line("gpuoverlap-100", 100, 0, "d..2.", "10.001000", "sched_stat_runtime",
               "comm=gpuoverlap pid=100 runtime=1000");
  const SchedRecord record = parse_sched_record(text);
  EXPECT_EQ(record.lost_events_by_cpu.at(0), 17);
  EXPECT_EQ(record.unreadable_lines, 2);
  ASSERT_EQ(record.events.size(), 2u);
  const auto waits = thread_waits(record, {100}, 10'000'000'000, 11'000'000'000, kProcess100);
  ASSERT_EQ(waits.size(), 1u);
  EXPECT_TRUE(waits[0].lost_events);
  EXPECT_EQ(waits[0].holder_kind, ThreadKind::kernel);
  EXPECT_NE(describe(waits[0]).find("lost events"), std::string::npos);
}

TEST(SchedAttribution, FramesGetTheirWaitsAndASleepTheKernelCountedAsRunDelayIsNamed) {
  // Two frames of 8 ms; in the second the frame loop yields behind an idle spinner until the
  // tick (1.01 ms), sleeps 4 ms and is woken onto its idle CPU (0.01 ms). The kernel's schedstat
  // says 3 ms of run delay: 1.98 ms more than the record shows runnable, within the sleep.
  ScenarioTimeline timeline;
  timeline.time_origin_ns = 10'000'000'000;
  for (std::uint32_t f = 0; f < 2; ++f) {
    FrameRecord frame;
    frame.frame = f;
    frame.cpu_start_us = 8000.0 * f;
    frame.frame_interval_us = 8000.0;
    frame.loop_run_delay_us = f == 0 ? 0.0 : 3000.0;
    timeline.frames.push_back(frame);
  }
  std::string text;
  text += line("gpuoverlap-100", 100, 0, "d..2.", "10.001000", "sched_switch",
               switch_body("x", 5, 'S', "gpuoverlap", 100));
  text +=
      line("gpuoverlap-100", 100, 0, ".....", "10.002000", "sys_enter", "NR 24 (0, 0, 0, 0, 0, 0)");
  text += line("gpuoverlap-100", 100, 0, "d..2.", "10.002010", "sched_switch",
               switch_body("gpuoverlap", 100, 'R', "spinner", 103));
  text += line("spinner-103", 100, 0, "d.h1.", "10.003010", "local_timer_entry", "vector=236");
  text += line("spinner-103", 100, 0, "d..2.", "10.003020", "sched_switch",
               switch_body("spinner", 103, 'R', "gpuoverlap", 100));
  text += line("gpuoverlap-100", 100, 0, "d..2.", "10.003500", "sched_switch",
               switch_body("gpuoverlap", 100, 'S', "swapper/0", 0));
  text += line("worker 0-104", 100, 1, "d..3.", "10.007500", "sched_wakeup",
               "comm=gpuoverlap pid=100 prio=120 target_cpu=000");
  text += line("<idle>-0", 0, 0, "d..2.", "10.007510", "sched_switch",
               switch_body("swapper/0", 0, 'R', "gpuoverlap", 100));
  ForegroundThreads threads;
  threads.frame_loop = 100;
  threads.workers = {104};
  attach_sched_record(timeline, parse_sched_record(text), threads, 100, {});

  EXPECT_TRUE(timeline.sched_recorded);
  EXPECT_DOUBLE_EQ(*timeline.frames[0].sched_loop_runnable_us, 0.0);
  EXPECT_DOUBLE_EQ(*timeline.frames[1].sched_loop_runnable_us, 1020.0);
  EXPECT_DOUBLE_EQ(*timeline.frames[1].sched_loop_to_background_us, 1010.0);
  EXPECT_DOUBLE_EQ(*timeline.frames[1].sched_workers_runnable_us, 0.0);
  EXPECT_EQ(timeline.frames[1].sched_loop_longest,
            "spinner-103 (background) held its CPU 1.01 ms after it yielded, until the next tick");
  ASSERT_EQ(timeline.sched_waits.size(), 2u);
  for (const SchedWaitRow& row : timeline.sched_waits) {
    EXPECT_EQ(row.thread, "frame loop");
    EXPECT_EQ(row.frame, 1u);
  }
  EXPECT_EQ(timeline.sched_waits[1].waker, "worker 0-104");
  EXPECT_EQ(timeline.sched_waits[1].waker_kind, "frame's thread");
  const auto& loop = timeline.meta["sched_trace"]["frame_loop"];
  EXPECT_EQ(loop["frames_run_delay_asleep"], 1);
  EXPECT_NEAR(loop["run_delay_asleep_ms"].get<double>(), 1.98, 1e-9);
  const std::string summary = loop["summary"];
  EXPECT_NE(summary.find("1.0 ms behind background threads, mostly after it yielded, until the "
                         "next tick"),
            std::string::npos)
      << summary;
  EXPECT_NE(summary.find("asleep"), std::string::npos) << summary;
  // The CPU lanes: who ran on CPU 0, the idle task left out.
  bool spinner_lane = false;
  for (const SchedCpuSlice& c : timeline.sched_cpu_slices) {
    EXPECT_NE(c.thread.rfind("swapper", 0), 0u);
    EXPECT_LT(c.start_us, c.end_us);
    if (c.thread == "spinner-103") {
      spinner_lane = true;
      EXPECT_EQ(c.cpu, 0);
      EXPECT_DOUBLE_EQ(c.start_us, 2010.0);
      EXPECT_DOUBLE_EQ(c.end_us, 3020.0);
      EXPECT_EQ(c.kind, "background");
    }
  }
  EXPECT_TRUE(spinner_lane);
}

// The CPU lanes where the kernel wrote no switch: a thread's lane ends at the idle task's first
// line, and a switch away from a thread never seen coming in does not stretch the lane before.
TEST(SchedAttribution, CpuLanesEndAtTheIdleTasksLinesAndAtAThreadsLastLine) {
  ScenarioTimeline timeline;
  timeline.time_origin_ns = 10'000'000'000;
  FrameRecord frame;
  frame.frame = 0;
  frame.cpu_start_us = 10000.0;  // the frame interval ends where the next frame starts
  frame.frame_interval_us = 10000.0;
  timeline.frames.push_back(frame);
  std::string text;
  text += line("<idle>-0", 0, 0, "d..2.", "10.001000", "sched_switch",
               switch_body("swapper/0", 0, 'R', "spinner", 103));
  text += line("spinner-103", 100, 0, "d.h1.", "10.002000", "local_timer_entry", "vector=236");
  // The spinner's switch to the idle task is missing; the idle task's tick is the first sign.
  text += line("<idle>-0", 0, 0, "d.h1.", "10.003000", "local_timer_entry", "vector=236");
  text += line("<idle>-0", 0, 0, "d..2.", "10.004000", "sched_switch",
               switch_body("swapper/0", 0, 'R', "load", 200));
  text += line("load-200", 200, 0, "d.h1.", "10.005000", "local_timer_entry", "vector=236");
  // A thread the record never showed coming in is switched away: the load ran until its last
  // line at least, not up to this switch.
  text += line("other-300", 300, 0, "d..2.", "10.007000", "sched_switch",
               switch_body("other", 300, 'S', "swapper/0", 0));
  ForegroundThreads threads;
  threads.frame_loop = 100;
  attach_sched_record(timeline, parse_sched_record(text), threads, 100, {});
  std::vector<std::tuple<std::string, double, double>> lanes;
  for (const SchedCpuSlice& c : timeline.sched_cpu_slices)
    lanes.emplace_back(c.thread, c.start_us, c.end_us);
  const std::vector<std::tuple<std::string, double, double>> expected{
      {"spinner-103", 1000.0, 3000.0}, {"load-200", 4000.0, 5000.0}};
  EXPECT_EQ(lanes, expected);
}

TEST(SchedWaitsFile, ReadsBackAsWrittenAndRefusesDamageNamingTheFile) {
  Scenario scenario;
  scenario.name = "s";
  ScenarioTimeline timeline;
  SchedWaitRow row;
  row.thread = "frame loop", row.thread_id = 100, row.frame = 3;
  row.off_us = 10, row.on_us = 30, row.runnable_us = 5;
  row.lost_by = "blocked", row.blocked = true, row.holder = "compile 0-103";
  row.holder_kind = "background";
  row.given_back_by = "its wake-up", row.waker = "worker 0-104", row.waker_kind = "frame's thread";
  row.text = "blocked 0.02 ms, woken by worker 0-104, then runnable \"behind\" compile 0";
  timeline.sched_waits = {row};
  const auto dir = std::filesystem::temp_directory_path() /
                   ("gpuoverlap-sched-waits-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = dir / "sched_waits.csv";
  auto write = [&](const std::string& text) { std::ofstream(path) << text; };
  const std::string good = sched_waits_csv(scenario, timeline);
  write(good);
  const auto loaded = load_sched_waits(path, kResultsFormatVersion);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  ASSERT_EQ(loaded->size(), 1u);
  EXPECT_EQ((*loaded)[0].frame, 3u);
  EXPECT_EQ((*loaded)[0].runnable_us, 5);
  EXPECT_EQ((*loaded)[0].given_back_by, "its wake-up");
  EXPECT_TRUE((*loaded)[0].blocked) << "read from lost_by";
  EXPECT_EQ((*loaded)[0].text, row.text);
  for (const auto& [from, to, why] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {",blocked,", ",napping,", "'napping' is none of yielded | tick"},
           {",30.000,5.000,", ",5.000,5.000,", "do not fit"},
           {",background,", ",martian,", "'martian' is none of background"}}) {
    std::string damaged = good;
    const auto at = damaged.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    damaged.replace(at, from.size(), to);
    write(damaged);
    const auto refused = load_sched_waits(path, kResultsFormatVersion);
    ASSERT_FALSE(refused.ok()) << damaged;
    EXPECT_NE(refused.error().message.find(path.string()), std::string::npos);
    EXPECT_NE(refused.error().message.find(why), std::string::npos) << refused.error().message;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gpuoverlap
