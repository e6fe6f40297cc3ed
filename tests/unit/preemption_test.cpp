// Preemption without a GPU: the [preemption] table and matrices, the load calibration against
// model devices, the latency analysis and classification on synthetic timelines, the
// SequencePoller, and the load process's protocol and lifetime with a shell script child.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "analysis/csv_table.h"
#include "core/clock.h"
#include "preemption/load_calibration.h"
#include "preemption/load_process.h"
#include "preemption/preemption_analysis.h"
#include "process_state.h"
#include "queues/sequence_poller.h"
#include "scenarios/presets.h"
#include "scenarios/scenario.h"

namespace gpuoverlap::preemption {
namespace {

Result<std::vector<Scenario>> parse(const std::string& body) {
  return parse_preemption("name = \"p\"\n[preemption]\n" + body, "test.toml");
}

TEST(LoadProcessProtocol, TaggedLinesAreTakenInOrderWhateverTheLineEnd) {
  std::string buffer = "noise\nloading {\"threads\":3}\r\nresult {\"a\"";
  auto loading = take_tagged_line(buffer, "loading");
  ASSERT_TRUE(loading.has_value());
  ASSERT_TRUE(loading->ok()) << loading->error().message;
  EXPECT_EQ(loading->value().at("threads"), 3);
  // An incomplete line stays for the next read.
  EXPECT_FALSE(take_tagged_line(buffer, "result").has_value());
  EXPECT_EQ(buffer, "result {\"a\"");
  buffer += ":1}\n";
  auto result = take_tagged_line(buffer, "result");
  ASSERT_TRUE(result && result->ok());
  EXPECT_EQ(result->value().at("a"), 1);
  EXPECT_TRUE(buffer.empty());

  std::string failed = "failed \"no device\"\n";
  auto refusal = take_tagged_line(failed, "loading");
  ASSERT_TRUE(refusal && !refusal->ok());
  EXPECT_EQ(refusal->error().message, "the load process failed: no device");
  std::string malformed = "loading {oops\n";
  auto bad = take_tagged_line(malformed, "loading");
  ASSERT_TRUE(bad && !bad->ok());
  EXPECT_NE(bad->error().message.find("malformed 'loading' line"), std::string::npos);
}

TEST(PreemptionParse, OneConfigurationWithDefaultsAndExplicitSizes) {
  auto s = parse("load = \"slow-shader\"\npriority = \"high\"\niterations = 5000\n");
  ASSERT_TRUE(s) << s.error().message;
  ASSERT_EQ(s->size(), 1u);
  const Scenario& scenario = (*s)[0];
  EXPECT_EQ(scenario.name, "p");
  ASSERT_TRUE(scenario.preemption);
  EXPECT_EQ(scenario.preemption->load, LoadKind::slow_shader);
  EXPECT_EQ(scenario.preemption->priority, QueuePriority::high);
  EXPECT_DOUBLE_EQ(scenario.preemption->period_ms, 11.1);
  EXPECT_DOUBLE_EQ(scenario.preemption->target_ms, 100);
  EXPECT_EQ(scenario.preemption->iterations, 5000u);
  // Queues and workloads made from the spec: the load on DIRECT, the urgent job on COMPUTE.
  ASSERT_EQ(scenario.queues.size(), 2u);
  EXPECT_EQ(scenario.queues[0].type, QueueType::direct);
  EXPECT_EQ(scenario.queues[1].type, QueueType::compute);
  EXPECT_EQ(scenario.queues[1].priority, QueuePriority::high);
  ASSERT_EQ(scenario.workloads.size(), 2u);
  EXPECT_EQ(scenario.workloads[0].name, kLoadWorkload);
  EXPECT_EQ(scenario.workloads[1].name, kUrgentWorkload);
}

TEST(PreemptionParse, ArraysMakeAMatrixNamedPerCombination) {
  auto s = parse(
      "load = [\"big-dispatch\", \"many-draws\"]\npriority = [\"normal\", \"realtime\"]\n"
      "process = [\"same\", \"separate\"]\n");
  ASSERT_TRUE(s) << s.error().message;
  ASSERT_EQ(s->size(), 8u);
  EXPECT_EQ((*s)[0].name, "p/big-dispatch-normal-same");
  EXPECT_EQ((*s)[7].name, "p/many-draws-realtime-separate");
  EXPECT_EQ((*s)[7].preemption->process, ProcessMode::separate);
  // graphics-and-compute has two load parts: draws, then the dispatch.
  auto g = parse("load = \"graphics-and-compute\"\n");
  ASSERT_TRUE(g);
  ASSERT_EQ((*g)[0].workloads.size(), 3u);
  EXPECT_EQ((*g)[0].workloads[0].kind, WorkloadKind::graphics);
  EXPECT_EQ((*g)[0].workloads[1].name, kLoadComputeWorkload);
}

TEST(PreemptionParse, BadInputIsRejectedWithTheLineAndKey) {
  const std::pair<const char*, const char*> cases[] = {
      {"priority = \"high\"\n", "needs 'load'"},
      {"load = \"huge\"\n", "unknown load 'huge'"},
      {"load = \"big-dispatch\"\nperiod_ms = 0.1\n", "period_ms"},
      {"load = \"big-dispatch\"\ntarget_ms = 5000\n", "target_ms"},
      {"load = \"big-dispatch\"\nduration_ms = 5\n", "duration_ms"},
      {"load = \"big-dispatch\"\ngroups = 4096\n", "is 4096, must be in [1, 4095]"},
      {"load = \"big-dispatch\"\ndraws = 10\n", "draws applies to graphics loads"},
      {"load = \"many-draws\"\ngroups = 10\n", "groups applies to compute loads"},
      {"load = [\"big-dispatch\", \"big-dispatch\"]\n", "appears twice"},
      {"load = \"big-dispatch\"\nframes = 3\n", "unknown key 'frames'"},
      {"load = \"big-dispatch\"\nduration_ms = 10\nperiod_ms = 11.1\n", "shorter than one"},
  };
  for (const auto& [body, expected] : cases) {
    auto s = parse(body);
    ASSERT_FALSE(s) << body;
    EXPECT_NE(s.error().message.find(expected), std::string::npos) << s.error().message;
    EXPECT_EQ(s.error().message.rfind("test.toml", 0), 0u) << s.error().message;
  }
  // A preemption file is not a frame scenario.
  EXPECT_FALSE(parse_scenario("name = \"p\"\n[preemption]\nload = \"big-dispatch\"\n", "x.toml"));
}

TEST(PreemptionParse, EveryPreemptionPresetResolves) {
  std::size_t presets_seen = 0;
  for (const Preset& p : presets()) {
    if (std::string_view(p.name).rfind("preemption-", 0) != 0) continue;
    ++presets_seen;
    auto s = resolve_scenarios(std::string(p.name));
    ASSERT_TRUE(s) << p.name << ": " << s.error().message;
    EXPECT_EQ(s->size(), p.name == "preemption-matrix" ? 12u : 1u) << p.name;
    for (const Scenario& scenario : *s) EXPECT_TRUE(scenario.preemption) << scenario.name;
  }
  EXPECT_EQ(presets_seen, 13u);  // 4 loads x 3 priorities, and the matrix
}

TEST(PreemptionSpec, JsonRoundTripAndRoles) {
  PreemptionSpec spec;
  spec.load = LoadKind::graphics_and_compute;
  spec.priority = QueuePriority::realtime;
  spec.process = ProcessMode::separate;
  spec.draws = 100;
  spec.duration_ms = 500;
  auto back = spec_from_json(to_json(spec));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(to_json(*back), to_json(spec));
  EXPECT_FALSE(spec_from_json(nlohmann::json{{"load", "big-dispatch"}}));
  EXPECT_EQ(describe(spec),
            "graphics-and-compute load of 100 ms on DIRECT, urgent job every 11.1 ms on a realtime "
            "COMPUTE queue for 500 ms, load in a second process");
  const Scenario urgent = make_scenario(spec, Role::urgent_only, "u");
  ASSERT_EQ(urgent.workloads.size(), 1u);
  EXPECT_EQ(urgent.workloads[0].name, kUrgentWorkload);
  const Scenario load = make_scenario(spec, Role::load_only, "l");
  ASSERT_EQ(load.workloads.size(), 2u);
  EXPECT_EQ(load.queues.size(), 1u);
}

// A model device: a load part takes overhead + per-unit cost x its work, where work is
// threads x iterations (compute) or draws x iterations (graphics).
MeasureLoadMs model_device(double overhead_ms, double ms_per_unit, int* calls = nullptr) {
  return [=](const LoadSize& s) -> Result<double> {
    if (calls) ++*calls;
    const double units =
        s.draws > 0 ? double(s.draws) * s.iterations : double(s.groups) * s.iterations;
    return overhead_ms + ms_per_unit * units;
  };
}

TEST(LoadCalibration, BigDispatchGrowsThreadsFirstThenIterationsToTheTarget) {
  PreemptionSpec spec;
  spec.load = LoadKind::big_dispatch;
  const auto plans = plan_parts(spec, kMaxComputeGroups);
  ASSERT_EQ(plans.size(), 1u);
  auto fast = calibrate_part(plans[0], 100, model_device(0.01, 1e-4));
  ASSERT_TRUE(fast) << fast.error().message;
  EXPECT_EQ(fast->size.groups, kMaxComputeGroups);  // far more threads than any GPU holds
  EXPECT_GT(fast->size.iterations, 1u);
  EXPECT_TRUE(fast->reached_target);
  const double final_ms = fast->probes.back().second;
  EXPECT_NEAR(final_ms, 100, 10);
  // No probe ran more than 16x longer than the one before (plus the fixed overhead).
  for (std::size_t i = 1; i < fast->probes.size(); ++i)
    EXPECT_LE(fast->probes[i].second, 16 * fast->probes[i - 1].second * 1.01 + 0.02);
  // A slow device stops growing threads early.
  auto slow = calibrate_part(plans[0], 100, model_device(0.01, 0.5));
  ASSERT_TRUE(slow);
  EXPECT_LT(slow->size.groups, kMaxComputeGroups);
  EXPECT_EQ(slow->size.iterations, 1u);
  EXPECT_NEAR(slow->probes.back().second, 100, 10);
}

TEST(LoadCalibration, SlowShaderKeepsOneGroupAndStopsAtTheIterationBound) {
  PreemptionSpec spec;
  spec.load = LoadKind::slow_shader;
  const auto plans = plan_parts(spec, kMaxComputeGroups);
  auto c = calibrate_part(plans[0], 100, model_device(0.0, 1e-7));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->size.groups, 1u);
  EXPECT_EQ(c->size.iterations, kMaxLoadIterations);  // bounded, short of the target
  EXPECT_FALSE(c->reached_target);
  EXPECT_NE(c->note.find("bounds"), std::string::npos) << c->note;
}

TEST(LoadCalibration, ExplicitSizesAreMeasuredOnceAndAFailedProbeEndsIt) {
  PreemptionSpec spec;
  spec.load = LoadKind::many_draws;
  spec.draws = 50;
  spec.iterations = 3;
  const auto plans = plan_parts(spec, kMaxComputeGroups);
  ASSERT_TRUE(plans[0].growth.empty());
  int calls = 0;
  auto c = calibrate_part(plans[0], 100, model_device(0.1, 0.01, &calls));
  ASSERT_TRUE(c);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(c->size.draws, 50u);
  EXPECT_EQ(c->size.iterations, 3u);
  // graphics-and-compute: two parts, each half the target.
  spec.load = LoadKind::graphics_and_compute;
  EXPECT_EQ(plan_parts(spec, kMaxComputeGroups).size(), 2u);
  EXPECT_DOUBLE_EQ(part_target_ms(spec), 50);
  int probes = 0;
  auto failing = calibrate_part(plan_parts(PreemptionSpec{}, kMaxComputeGroups)[0], 100,
                                [&](const LoadSize&) -> Result<double> {
                                  if (++probes == 3) return make_error("device lost");
                                  return 0.01;
                                });
  ASSERT_FALSE(failing);
  EXPECT_NE(failing.error().message.find("device lost"), std::string::npos);
}

TEST(LoadCalibration, ScaleSizeRespectsBoundsAndShrinksTheLastDimensionFirst) {
  PreemptionSpec spec;
  const PartPlan plan = plan_parts(spec, 100)[0];  // a device that dispatches 100 groups
  LoadSize size = plan.start;
  EXPECT_NEAR(scale_size(size, plan, 1000), 1000, 1);
  EXPECT_EQ(size.groups, 100u);
  EXPECT_EQ(size.iterations, 10u);
  EXPECT_NEAR(scale_size(size, plan, 0.5), 0.5, 1e-9);
  EXPECT_EQ(size.iterations, 5u);
  EXPECT_EQ(size.groups, 100u);
}

// A synthetic one-process run: load submissions of 50 ms back to back (two alone first),
// urgent jobs every 10 ms that start `latency(k)` after their submit and run 20 µs.
ScenarioTimeline synthetic(const Scenario& s, const std::function<double(std::uint32_t)>& latency,
                           std::uint32_t urgent_count) {
  ScenarioTimeline t;
  t.preemption = PreemptionRunInfo{};
  t.preemption->baseline_loads = 2;
  for (std::uint32_t i = 0; i < 8; ++i) {
    WorkloadFrameRecord r;
    r.frame = i;
    r.workload = 0;
    r.frame_t0_us = -100'000.0 + 50'000.0 * i;
    r.poll_start_us = 5;
    r.poll_end_us = i < 2 ? 50'000 : 55'000;  // slowed down 10% once contended
    t.records.push_back(r);
  }
  for (std::uint32_t k = 0; k < urgent_count; ++k) {
    WorkloadFrameRecord r;
    r.frame = k;
    r.workload = 1;
    r.frame_t0_us = 10'000.0 * k + 1;
    r.poll_start_us = latency(k);
    r.poll_end_us = latency(k) + 20;
    t.records.push_back(r);
    t.frames.push_back({.frame = k, .cpu_start_us = r.frame_t0_us, .cpu_submit_us = 3});
  }
  (void)s;
  return t;
}

TEST(PreemptionAnalysis, ClassifiesPreemptsCoarseAndBlocked) {
  PreemptionSpec spec;
  spec.period_ms = 10;
  const Scenario s = make_scenario(spec, Role::both, "s");
  const ClockSummary preempts = summarize_clock(s,
                                                synthetic(
                                                    s, [](std::uint32_t) { return 30.0; }, 20),
                                                Clock::poll);
  EXPECT_EQ(preempts.classification, PreemptionClass::preempts);
  EXPECT_EQ(preempts.deadline_misses, 0u);
  EXPECT_NEAR(*preempts.latency_us[2], 30, 1e-9);
  ASSERT_TRUE(preempts.load_slowdown);
  EXPECT_NEAR(*preempts.load_slowdown, 1.1, 1e-3);
  const ClockSummary coarse =
      summarize_clock(s,
                      synthetic(
                          s, [](std::uint32_t k) { return 100.0 + 100 * (k % 5); }, 20),
                      Clock::poll);
  EXPECT_EQ(coarse.classification, PreemptionClass::coarse);
  // Blocked: each job waits for the running load's end (loads end at 55 ms + 50 ms k).
  auto wait_for_load = [](std::uint32_t k) {
    const double submit = 10'000.0 * k + 1;
    for (int i = 2; i < 8; ++i) {
      const double start = -100'000.0 + 50'000.0 * i + 5, end = start - 5 + 55'000;
      if (submit >= start && submit < end) return end - submit + 10;
    }
    return 10.0;
  };
  const ClockSummary blocked = summarize_clock(s, synthetic(s, wait_for_load, 20), Clock::poll);
  EXPECT_EQ(blocked.classification, PreemptionClass::blocked);
  EXPECT_GT(blocked.deadline_misses, 0u);
  EXPECT_DOUBLE_EQ(blocked.waited_for_load_pct, 100.0);
  EXPECT_NE(blocked.reason.find("waited for it to end"), std::string::npos) << blocked.reason;
  EXPECT_EQ(classify(std::nullopt, 11.1), PreemptionClass::unmeasured);
  EXPECT_EQ(classify(99.9, 11.1), PreemptionClass::preempts);
  EXPECT_EQ(classify(100.0, 11.1), PreemptionClass::coarse);
  EXPECT_EQ(classify(11'100.0, 11.1), PreemptionClass::blocked);
}

TEST(PreemptionAnalysis, CsvHasTheColumnsAndARowPerSubmission) {
  PreemptionSpec spec;
  spec.period_ms = 10;
  const Scenario s = make_scenario(spec, Role::both, "s");
  ScenarioTimeline t = synthetic(
      s, [](std::uint32_t k) { return k == 3 ? 12'000.0 : 40.0; }, 6);
  t.records.back().status = RecordStatus::timeout;  // the last job never finished
  t.records.back().poll_end_us.reset();
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("preemption-" + std::to_string(getpid()) + ".csv");
  std::ofstream(path) << preemption_csv(s, t);
  const auto table = read_csv(path.string(), kPreemptionColumns);
  std::filesystem::remove(path);
  ASSERT_EQ(table.rows.size(), 6u);
  for (std::size_t r = 0; r < 6; ++r) {
    EXPECT_GE(*table.number(r, "latency_us"), 0.0);
    EXPECT_EQ(table.at(r, "latency_clock"), "poll");
    EXPECT_EQ(table.at(r, "load"), "big-dispatch");
    EXPECT_EQ(table.at(r, "process"), "same");
  }
  EXPECT_EQ(table.at(0, "deadline_met"), "1");
  EXPECT_EQ(table.at(3, "deadline_met"), "0");  // 12 ms against a 10 ms period
  EXPECT_EQ(table.at(5, "deadline_met"), "0");  // timed out
  EXPECT_EQ(table.at(5, "status"), "timeout");
  EXPECT_EQ(table.at(1, "load_running"), "1");
  EXPECT_NEAR(*table.number(1, "submit_call_us"), 3, 1e-9);
  // summary.csv's urgent rows carry the latency columns; the load's do not.
  const auto rows = summary_rows(s, t);
  bool urgent_row = false;
  for (const SummaryRow& r : rows) {
    EXPECT_EQ(r.preemption.has_value(), r.workload == 1);
    if (r.workload == 1) {
      urgent_row = true;
      EXPECT_EQ(r.preemption->deadline_misses, 2u);
      EXPECT_EQ(r.preemption->classification, "blocked");
    }
  }
  EXPECT_TRUE(urgent_row);
}

// A start the poller saw late (its window past the tolerance) is when the poller looked: the
// poll clock's latencies leave it out and say so, and the row takes its latency from the
// timestamps where they have the start.
TEST(PreemptionAnalysis, ADisturbedPollStartIsLeftOutOfThePollLatencies) {
  PreemptionSpec spec;
  spec.period_ms = 10;
  const Scenario s = make_scenario(spec, Role::both, "s");
  ScenarioTimeline t = synthetic(
      s, [](std::uint32_t) { return 30.0; }, 20);
  std::size_t late = 0;
  for (WorkloadFrameRecord& r : t.records) {
    if (r.workload != 1) continue;
    r.ts_start_us = 28;
    r.ts_end_us = 48;
    if (r.frame % 4 == 0) {  // seen 5 ms late
      r.poll_start_us = 5'030;
      r.poll_disturbed = kPollStartDisturbed;
      ++late;
    }
  }
  const ClockSummary poll = summarize_clock(s, t, Clock::poll);
  EXPECT_EQ(poll.disturbed, late);
  EXPECT_EQ(poll.measured, 20 - late);
  EXPECT_NEAR(*poll.latency_us[3], 30, 1e-9) << "the late starts are not the maximum";
  EXPECT_EQ(poll.classification, PreemptionClass::preempts);
  EXPECT_NE(poll.reason.find("5 submissions with a disturbed poll stamp left out"),
            std::string::npos)
      << poll.reason;
  const ClockSummary ts = summarize_clock(s, t, Clock::ts);
  EXPECT_EQ(ts.disturbed, 0u) << "the timestamps do not rest on the poller";
  EXPECT_EQ(ts.measured, 20u);
  for (const UrgentRow& row : urgent_rows(s, t)) {
    EXPECT_EQ(row.latency_clock, row.submission % 4 == 0 ? Clock::ts : Clock::poll);
    EXPECT_NEAR(*row.latency_us, row.submission % 4 == 0 ? 28 : 30, 1e-9);
  }
  // Without timestamps the disturbed poll start is all there is: kept, and flagged.
  for (WorkloadFrameRecord& r : t.records) r.ts_start_us.reset();
  const std::filesystem::path path = std::filesystem::temp_directory_path() /
                                     ("preemption-late-" + std::to_string(getpid()) + ".csv");
  std::ofstream(path) << preemption_csv(s, t);
  const auto table = read_csv(path.string(), kPreemptionColumns);
  std::filesystem::remove(path);
  ASSERT_EQ(table.rows.size(), 20u);
  EXPECT_EQ(table.at(0, "poll_disturbed"), "start");
  EXPECT_EQ(table.at(0, "latency_clock"), "poll");
  EXPECT_NEAR(*table.number(0, "latency_us"), 5'030, 1e-9);
  EXPECT_EQ(table.at(1, "poll_disturbed"), "");
}

// Waits until the poller has seen `count` numbers in all; false past a generous deadline
// (a poller that never sees a number is a failure, a slow one under sanitizers is not).
bool wait_until_found(const SequencePoller& poller, std::uint64_t count) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (poller.found() < count) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  return true;
}

TEST(SequencePoller, TimesEveryNewNumberWithItsClock) {
  alignas(64) std::uint32_t memory[16] = {};
  memory[0] = 7;  // what a word holds at start is not an event
  SequencePoller poller;
  poller.start({{&memory[0], &memory[2]}, {&memory[8], nullptr}}, 1000);
  const std::int64_t before = monotonic_raw_ns();
  for (std::uint32_t v = 1; v <= 50; ++v) {
    __atomic_store_n(&memory[2], v * 100, __ATOMIC_RELAXED);
    __atomic_store_n(&memory[3], 0, __ATOMIC_RELAXED);
    __atomic_store_n(&memory[0], v + 7, __ATOMIC_RELEASE);
    __atomic_store_n(&memory[8], v, __ATOMIC_RELEASE);
    // Each number stays until seen, as the contract asks, so none may be missed.
    ASSERT_TRUE(wait_until_found(poller, 2 * v)) << "number " << v << " never seen";
  }
  const auto events = poller.stop();
  EXPECT_FALSE(poller.overflowed());
  std::size_t first = 0, second = 0;
  std::uint32_t last_first = 7, last_second = 0;
  for (const SequenceEvent& e : events) {
    EXPECT_GE(e.seen_ns, before);
    if (e.word == 0) {
      ++first;
      EXPECT_EQ(e.value, last_first + 1);  // in order, none invented, none missed
      last_first = e.value;
      EXPECT_EQ(e.clock_ticks, std::uint64_t{(e.value - 7) * 100u});
    } else {
      ++second;
      EXPECT_EQ(e.value, last_second + 1);
      last_second = e.value;
      EXPECT_EQ(e.clock_ticks, 0u);
    }
  }
  EXPECT_EQ(first, 50u);
  EXPECT_EQ(second, 50u);
  EXPECT_EQ(poller.found(), 100u);
  // Capacity bounds what is kept; found() still counts what was dropped.
  SequencePoller small;
  small.start({{&memory[8], nullptr}}, 2);
  for (std::uint32_t v = 100; v < 110; ++v) {
    __atomic_store_n(&memory[8], v, __ATOMIC_RELEASE);
    ASSERT_TRUE(wait_until_found(small, v - 99));
  }
  EXPECT_EQ(small.stop().size(), 2u);
  EXPECT_TRUE(small.overflowed());
  EXPECT_EQ(small.found(), 10u);
}

// A child that speaks the protocol: a shell script standing in for `gpuoverlap load-process`.
std::string write_script(const std::string& name, const std::string& body) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / (name + "-" + std::to_string(getpid()) + ".sh");
  std::ofstream(path) << "#!/bin/sh\n" << body;
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  return path.string();
}

TEST(LoadProcess, ProtocolStopAndExit) {
  const std::string script = write_script("load-child",
                                          "echo 'noise before'\n"
                                          "echo 'loading {\"pid\": 1}'\n"
                                          "read line\n"
                                          "[ \"$line\" = stop ] || exit 3\n"
                                          "echo 'result {\"records\": [], \"ok\": true}'\n"
                                          "exit 0\n");
  auto child = LoadProcess::start(script, {});
  ASSERT_TRUE(child) << child.error().message;
  const pid_t pid = (*child)->pid();
  auto loading = (*child)->wait_for("loading", monotonic_raw_ns() + 10'000'000'000);
  ASSERT_TRUE(loading) << loading.error().message;
  EXPECT_EQ((*loading)["pid"], 1);
  (*child)->request_stop();
  auto result = (*child)->wait_for("result", monotonic_raw_ns() + 10'000'000'000);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_TRUE((*result)["ok"].get<bool>());
  EXPECT_EQ((*child)->finish(monotonic_raw_ns() + 10'000'000'000), "exit 0");
  EXPECT_TRUE(process_gone(pid));
  std::filesystem::remove(script);
}

TEST(LoadProcess, FailuresDeadlinesAndAChildThatWillNotStop) {
  const std::string failing = write_script("load-fail", "echo 'failed \"no device 9\"'\nexit 1\n");
  auto child = LoadProcess::start(failing, {});
  ASSERT_TRUE(child);
  auto loading = (*child)->wait_for("loading", monotonic_raw_ns() + 10'000'000'000);
  ASSERT_FALSE(loading);
  EXPECT_NE(loading.error().message.find("no device 9"), std::string::npos);
  EXPECT_EQ((*child)->finish(monotonic_raw_ns() + 10'000'000'000), "exit 1");

  // Ignores "stop" and SIGTERM: killed at the deadline, the wait bounded.
  const std::string stubborn =
      write_script("load-stubborn", "trap '' TERM\necho 'loading {}'\nwhile :; do sleep 1; done\n");
  auto hung = LoadProcess::start(stubborn, {});
  ASSERT_TRUE(hung);
  const pid_t pid = (*hung)->pid();
  ASSERT_TRUE((*hung)->wait_for("loading", monotonic_raw_ns() + 10'000'000'000));
  EXPECT_FALSE((*hung)->wait_for("result", monotonic_raw_ns() + 200'000'000));  // deadline
  const std::int64_t before = monotonic_raw_ns();
  EXPECT_EQ((*hung)->finish(monotonic_raw_ns() + 300'000'000), "killed after its deadline");
  EXPECT_LT(monotonic_raw_ns() - before, 5'000'000'000);
  EXPECT_TRUE(process_gone(pid));

  // Destroying the handle kills a child still running.
  auto dropped = LoadProcess::start(stubborn, {});
  ASSERT_TRUE(dropped);
  const pid_t dropped_pid = (*dropped)->pid();
  dropped->reset();
  EXPECT_TRUE(process_gone(dropped_pid));
  std::filesystem::remove(failing);
  std::filesystem::remove(stubborn);
}

TEST(LoadProcess, ResultRoundTripMovesTimesToTheParentsOrigin) {
  ScenarioTimeline child;
  child.time_origin_ns = 5'000'000;  // 5 ms after the parent's origin
  child.preemption = PreemptionRunInfo{};
  child.preemption->load_sizes = {{.groups = 4095, .iterations = 900},
                                  {.groups = 0, .iterations = 7, .draws = 300, .rows = kDrawRows}};
  child.preemption->calibration = {
      {.part = 0, .size = {.groups = 1}, .measured_ms = 0.1},
      {.part = 1, .size = {.groups = 0, .draws = 16, .rows = kDrawRows}, .measured_ms = 2.5}};
  child.preemption->baseline_loads = 3;
  child.preemption->calibrated = true;
  child.preemption->calibration_note = "iterations reached their bound";
  child.preemption->priority_granted = QueuePriority::high;  // the parent's own stays
  WorkloadFrameRecord r;
  r.frame = 2;
  r.workload = 0;
  r.frame_t0_us = 10;
  r.poll_start_us = 1.5;
  r.ts_end_us = 99;
  r.clk_start_ticks = 123456789012ull;
  r.status = RecordStatus::timeout;
  child.records.push_back(r);
  const nlohmann::json sent = nlohmann::json::parse(load_process_result(child).dump());
  ScenarioTimeline parent;
  parent.time_origin_ns = 0;
  parent.preemption = PreemptionRunInfo{};
  ASSERT_TRUE(merge_load_process(parent, sent));
  ASSERT_EQ(parent.records.size(), 1u);
  const WorkloadFrameRecord& m = parent.records[0];
  EXPECT_DOUBLE_EQ(m.frame_t0_us, 5'010);
  EXPECT_EQ(m.frame, 2u);
  EXPECT_EQ(m.poll_start_us, 1.5);
  EXPECT_FALSE(m.poll_end_us);
  EXPECT_EQ(m.ts_end_us, 99);
  EXPECT_EQ(m.clk_start_ticks, 123456789012ull);
  EXPECT_EQ(m.status, RecordStatus::timeout);
  EXPECT_EQ(parent.preemption->load_sizes, child.preemption->load_sizes);
  ASSERT_EQ(parent.preemption->calibration.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(parent.preemption->calibration[i].part, child.preemption->calibration[i].part);
    EXPECT_EQ(parent.preemption->calibration[i].size, child.preemption->calibration[i].size);
    EXPECT_EQ(parent.preemption->calibration[i].measured_ms,
              child.preemption->calibration[i].measured_ms);
  }
  EXPECT_EQ(parent.preemption->baseline_loads, 3u);
  EXPECT_TRUE(parent.preemption->calibrated);
  EXPECT_EQ(parent.preemption->calibration_note, "iterations reached their bound");
  EXPECT_EQ(parent.preemption->priority_granted, QueuePriority::normal);
  EXPECT_FALSE(merge_load_process(parent, nlohmann::json{{"records", 5}}));
}

}  // namespace
}  // namespace gpuoverlap::preemption

namespace gpuoverlap::preemption {
namespace {

TEST(PreemptionSpec, AsRunShowsTheCalibratedSizesWithoutChangingTheScenarioGiven) {
  PreemptionSpec spec;
  spec.load = LoadKind::graphics_and_compute;
  const Scenario given = make_scenario(spec, Role::both, "s");
  const std::uint32_t groups_before = given.workloads[1].groups;
  const Scenario ran =
      as_run(given, {LoadSize{.groups = 1, .iterations = 7, .draws = 3, .rows = 16},
                     LoadSize{.groups = 40, .iterations = 9}});
  EXPECT_EQ(ran.workloads[0].groups, 16u);  // a graphics part shows its rows
  EXPECT_EQ(ran.workloads[0].iterations, 7u);
  EXPECT_EQ(ran.workloads[1].groups, 40u);
  EXPECT_EQ(ran.workloads[1].iterations, 9u);
  EXPECT_EQ(ran.workloads.back().groups, given.workloads.back().groups);  // the urgent job
  EXPECT_EQ(given.workloads[1].groups, groups_before);
}

}  // namespace
}  // namespace gpuoverlap::preemption
