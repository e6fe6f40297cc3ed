// Clock truth without a GPU: least-squares fits, the shader clock's timebase verification, row
// flags, and the self-test's checks driven by a fake executor whose clocks are known.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <sstream>

#include "analysis/results.h"
#include "scenarios/scenario.h"
#include "selftest/selftest.h"
#include "timeline/clock_agreement.h"
#include "timeline/statistics.h"

namespace gpuoverlap {
namespace {

namespace fs = std::filesystem;

TEST(LinearFit, RecoversALineAndScoresNoise) {
  const auto exact = linear_fit({1, 2, 3, 4}, {5, 7, 9, 11});
  ASSERT_TRUE(exact);
  EXPECT_DOUBLE_EQ(exact->slope, 2.0);
  EXPECT_DOUBLE_EQ(exact->intercept, 3.0);
  EXPECT_DOUBLE_EQ(exact->r_squared, 1.0);
  const auto noisy = linear_fit({1, 2, 3, 4}, {1, 4, 2, 5});
  ASSERT_TRUE(noisy);
  EXPECT_LT(noisy->r_squared, 0.7);
  EXPECT_FALSE(linear_fit({1}, {1}));              // one point
  EXPECT_FALSE(linear_fit({2, 2, 2}, {1, 2, 3}));  // no spread in x
  // Tick-sized values keep their precision (centred sums).
  const auto big = linear_fit({1e15, 1e15 + 1e6, 1e15 + 2e6}, {0, 1e3, 2e3});
  ASSERT_TRUE(big);
  EXPECT_NEAR(big->slope, 1e-3, 1e-12);
}

WorkloadFrameRecord row(double poll_start, double poll_end, double clk_start, double clk_end) {
  WorkloadFrameRecord r;
  r.poll_start_us = poll_start;
  r.poll_end_us = poll_end;
  r.clk_start_us = clk_start;
  r.clk_end_us = clk_end;
  r.clk_start_ticks = static_cast<std::uint64_t>(clk_start * 1000 + 1e12);
  r.clk_end_ticks = static_cast<std::uint64_t>(clk_end * 1000 + 1e12);
  return r;
}

TEST(ShaderClockVerification, AcceptsClockValuesJustBeforeTheirStamps) {
  ScenarioTimeline t;
  for (int f = 0; f < 10; ++f) t.records.push_back(row(10.8, 100.7, 10.0, 100.0));
  const auto v = verify_shader_clock_timebase(t);
  EXPECT_EQ(v["verdict"], "accepted");
  EXPECT_NEAR(v["detection_delay_us"]["p50"].get<double>(), 0.75, 1e-9);
  EXPECT_NEAR(v["detection_delay_us"]["max"].get<double>(), 0.8, 1e-9);
  EXPECT_TRUE(t.records.front().clk_start_us.has_value());  // kept
}

TEST(ShaderClockVerification, RejectsStampsSeenBeforeTheirClockValue) {
  ScenarioTimeline t;
  for (int f = 0; f < 10; ++f) t.records.push_back(row(10.0, 100.0, 10.5, 100.5));
  t.records[3].clk_end_us = 110.0;  // 10 µs "after" its stamp was seen: impossible
  const auto v = verify_shader_clock_timebase(t);
  EXPECT_EQ(v["verdict"], "rejected");
  EXPECT_NE(v["reason"].get<std::string>().find("1 of 20 stamps"), std::string::npos);
  for (const auto& r : t.records) {
    EXPECT_FALSE(r.clk_start_us.has_value());    // cleared: not on the CPU clock
    EXPECT_TRUE(r.clk_start_ticks.has_value());  // the raw ticks stay
  }
}

TEST(ShaderClockVerification, CalibrationDeviationWidensTheSlack) {
  ScenarioTimeline t;
  t.records.push_back(row(10.0, 100.0, 13.0, 100.0));  // 3 µs early: beyond 2 µs alone
  t.records.front().calibration_deviation_us = 1.5;
  EXPECT_EQ(verify_shader_clock_timebase(t)["verdict"], "accepted");
}

TEST(ShaderClockVerification, RejectsAClockOnAnotherOrigin) {
  ScenarioTimeline t;  // lavapipe: ticks converted as ns land seconds away from the poll clock
  for (int f = 0; f < 5; ++f) t.records.push_back(row(10.0, 100.0, -7e9, -7e9 + 90));
  const auto v = verify_shader_clock_timebase(t);
  EXPECT_EQ(v["verdict"], "rejected");
  EXPECT_NE(v["reason"].get<std::string>().find("> 1000"), std::string::npos);
}

TEST(ShaderClockVerification, NeedsACalibrationToConvertAtAll) {
  ScenarioTimeline t;
  WorkloadFrameRecord r = row(10.0, 100.0, 0, 0);
  r.clk_start_us.reset();
  r.clk_end_us.reset();
  t.records.push_back(r);
  t.records.push_back(r);
  const auto v = verify_shader_clock_timebase(t);
  EXPECT_EQ(v["verdict"], "rejected");
  EXPECT_NE(v["reason"].get<std::string>().find("no calibration"), std::string::npos);
  ScenarioTimeline empty;
  EXPECT_EQ(verify_shader_clock_timebase(empty)["verdict"], "unavailable");
}

TEST(RowFlags, ToleranceIsAbsoluteFloorOrRelativeToTheDuration) {
  WorkloadFrameRecord r;
  r.poll_start_us = 0;
  r.poll_end_us = 5000;  // 5 ms: 1% is 50 µs
  r.ts_start_us = 30;    // 30 µs off: inside 50
  r.ts_end_us = 5060;    // 60 µs off: outside
  ScenarioTimeline t;
  t.records.push_back(r);
  EXPECT_NEAR(row_tolerance_us(r, {}), 50.3, 1e-9);  // 1% of the longest (ts) duration
  EXPECT_EQ(flag_disagreements(t, {}), 1u);
  EXPECT_EQ(disagreement_names(t.records[0].disagreements), "end:poll-ts");
  EXPECT_EQ(flag_disagreements(t, {100.0, 0.01}), 0u);  // a wider floor accepts it
  t.records[0].calibration_deviation_us = 20;
  EXPECT_EQ(flag_disagreements(t, {}), 0u);  // GPU vs CPU clock: the calibration counts
  t.records[0].status = RecordStatus::timeout;
  t.records[0].calibration_deviation_us = 0;
  EXPECT_EQ(flag_disagreements(t, {}), 0u);  // only ok rows are judged
}

TEST(Selftest, SaturationIsWhereEveryDoublingCosts) {
  // Flat while the GPU has room, then linear: full from 4 (each later doubling costs >= 1.5x).
  EXPECT_EQ(saturation_index({{1, 10}, {2, 10}, {4, 11}, {8, 20}, {16, 40}, {32, 80}}), 2u);
  EXPECT_EQ(saturation_index({{1, 10}, {2, 20}, {4, 40}}), 0u);  // full from the start
  EXPECT_FALSE(saturation_index({{1, 10}, {2, 10}, {4, 11}}));   // never full
}

Scenario chain_of_two() {
  Scenario s;
  s.queues.push_back({"q", QueueType::direct, QueuePriority::normal});
  s.workloads.push_back({"a", 0, WorkloadKind::compute, 1, 1, {}, std::nullopt});
  s.workloads.push_back({"b", 0, WorkloadKind::compute, 1, 1, {{0, BarrierKind::legacy}}});
  return s;
}

TEST(Selftest, OrderingViolationsPerClock) {
  ScenarioTimeline t;
  t.records.push_back({.frame = 0,
                       .workload = 0,
                       .poll_start_us = 0,
                       .poll_end_us = 10,
                       .ts_start_us = 0,
                       .ts_end_us = 10});
  t.records.push_back({.frame = 0,
                       .workload = 1,
                       .poll_start_us = 11,
                       .poll_end_us = 20,
                       .ts_start_us = 9,
                       .ts_end_us = 20});  // ts: starts before a ends
  EXPECT_EQ(ordering_violations(t, chain_of_two(), Clock::poll), 0u);
  EXPECT_EQ(ordering_violations(t, chain_of_two(), Clock::ts), 1u);
  EXPECT_EQ(ordering_violations(t, chain_of_two(), Clock::clk), 0u);  // no clk values
}

// Durations are known: 10 µs per iteration per 8 groups' worth of serial work, flat up to 4
// groups then linear. Every clock agrees within 1 µs, stamps cost nothing, except for the
// knobs below.
class KnownClocksExecutor : public ScenarioExecutor {
 public:
  bool overlap_chain = false;  // the chain's consumers start 5 µs before their producer ends
  double stamping_cost = 1.0;  // duration factor with stamps
  bool have_ping_pong = false;
  std::vector<RoundTripPath> paths_seen;
  // Every `disturb_every`-th frame's start stamp is seen this much late, with a window as
  // wide: a poller that lost its CPU (0: none).
  std::uint32_t disturb_every = 0;
  double late_us = 40.0;
  // The game frame's rounds (the neutrality check): paced 8 ms frames with a little jitter; with
  // `disturbed_negative`, 3 in 5 of the negative control's frames 1 ms late (a harness that
  // disturbs the frame under idle-priority load).
  bool disturbed_negative = false;
  std::vector<RunSettings> settings_seen;

  Result<ScenarioTimeline> run(const Scenario& s, const RunSettings& settings,
                               const ProgressCallback&) override {
    settings_seen.push_back(settings);
    ScenarioTimeline t;
    for (std::uint32_t f = 0; f < settings.frames; ++f) {
      double previous_end = 0;
      for (std::size_t w = 0; w < s.workloads.size(); ++w) {
        const WorkloadSpec& spec = s.workloads[w];
        const double full = std::max(1.0, spec.groups / 4.0);
        double duration = 10.0 * spec.iterations * full + 5.0;
        if (settings.stamping) duration *= stamping_cost;
        const double start = w == 0 ? 2.0 : previous_end + (overlap_chain ? -5.0 : 1.0);
        WorkloadFrameRecord r{.frame = f, .workload = w};
        r.ts_start_us = start - 0.5;
        r.ts_end_us = start + duration + 0.5;
        if (settings.stamping) {
          const bool late = disturb_every > 0 && f % disturb_every == 0;
          r.poll_start_us = start + 0.6 + (late ? late_us : 0.0);
          r.poll_end_us = start + duration + 0.6;
          r.poll_start_window_us = late ? late_us + 0.2 : 0.2;
          r.poll_end_window_us = 0.2;
          r.clk_start_us = start;
          r.clk_end_us = start + duration;
        }
        previous_end = start + duration;
        t.records.push_back(r);
      }
      if (s.cpu) {
        FrameRecord fr;
        fr.frame = f;
        const bool late = disturbed_negative && s.negative_control && f % 5 < 3;
        fr.frame_interval_us = late ? 9000.0 : 8000.0 + (f * 37 % 100);
        fr.cpu_phase_us = 5000.0 + (f * 13 % 50);
        fr.critical_path_us = 2500;
        fr.wake_max_us = 20;
        fr.cpu_frame_us = 6000;
        fr.gpu_span_us = 50;
        fr.cpu_submit_us = 20;
        fr.submit_to_start_us = 5;
        fr.poll_gap_max_us = 1;
        t.frames.push_back(fr);
      }
    }
    return t;
  }

  Result<PingPongResult> ping_pong(std::uint32_t rounds, StampMemory memory, RoundTripPath path,
                                   std::uint32_t) override {
    if (!have_ping_pong) return ScenarioExecutor::ping_pong(rounds, memory, path, 0);
    paths_seen.push_back(path);
    PingPongResult r;
    r.round_trip_us.assign(rounds, path == RoundTripPath::semaphore ? 8.0 : 1.5);
    r.memory = std::string(to_string(memory));
    return r;
  }
};

class SelftestRun : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.out_directory = fs::temp_directory_path() /
                             ("gpuoverlap-selftest-" + std::to_string(::getpid()) + "-" +
                              ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(options_.out_directory);
    options_.frames = 5;
    options_.warmup_frames = 0;
    options_.ping_pong_rounds = 10;
  }
  void TearDown() override { fs::remove_all(options_.out_directory); }

  std::vector<const CheckRow*> find(const SelftestOutcome& o, const std::string& check,
                                    const std::string& clock = "") {
    std::vector<const CheckRow*> rows;
    for (const CheckRow& r : o.rows)
      if (r.check == check && (clock.empty() || r.clock == clock)) rows.push_back(&r);
    return rows;
  }
  SelftestOptions options_;
  std::ostringstream log_;
};

TEST_F(SelftestRun, EveryCheckPassesOnAnHonestDevice) {
  KnownClocksExecutor executor;
  executor.have_ping_pong = true;
  const SelftestOutcome o = run_selftest(executor, options_, log_);
  ASSERT_FALSE(o.failure) << o.failure->message;
  EXPECT_TRUE(o.passed()) << selftest_table(o.rows);
  // Neutrality: the negative control's frames are the baseline's.
  const auto neutrality = find(o, "neutrality");
  ASSERT_EQ(neutrality.size(), 1u);
  EXPECT_EQ(neutrality[0]->verdict, Verdict::pass) << neutrality[0]->detail;
  EXPECT_EQ(neutrality[0]->config, "game-frame, 3 rounds");
  EXPECT_NE(neutrality[0]->detail.find("negative control non-intrusive: 0 of "), std::string::npos)
      << neutrality[0]->detail;
  // Linearity: both fits exact; saturation where the fake fills up (4 groups -> 8 is 2x).
  const auto linearity = find(o, "linearity");
  ASSERT_EQ(linearity.size(), 3u);
  EXPECT_NEAR(*linearity[0]->value, 1.0, 1e-9);
  EXPECT_NEAR(*linearity[1]->value, 1.0, 1e-9);
  EXPECT_DOUBLE_EQ(*linearity[2]->value, 4.0);
  // Agreement at three sizes, sized from the fit: the 1 ms workload lasts ~1 ms.
  std::vector<const CheckRow*> durations;
  for (const CheckRow* r : find(o, "clock_agreement"))
    if (r->metric == "duration p50") durations.push_back(r);
  ASSERT_EQ(durations.size(), 3u);
  EXPECT_NEAR(*durations[1]->value, 1000.0, 100.0);
  for (const CheckRow* r : find(o, "clock_agreement", "poll-clk"))
    EXPECT_EQ(r->verdict, Verdict::pass);
  // Detection: poll - clk = 0.6 µs on every stamp, none disturbed.
  const auto detection = find(o, "poll_detection");
  // p50 and p99 undisturbed, disturbed share, p99 all stamps, max, cpu steal, poller cpu
  // interrupts; uncached, cached
  ASSERT_EQ(detection.size(), 14u);
  EXPECT_EQ(detection[0]->metric, "p50 undisturbed");
  EXPECT_EQ(detection[2]->metric, "disturbed share");
  EXPECT_EQ(detection[2]->verdict, Verdict::pass);
  EXPECT_DOUBLE_EQ(*detection[2]->value, 0.0);
  EXPECT_EQ(detection[5]->metric, "cpu steal");
  // Sized for a p99: 1000 stamps, whatever --frames says, with the statistic's interval.
  EXPECT_NE(detection[1]->detail.find("1000 stamps; 95% interval ["), std::string::npos)
      << detection[1]->detail;
  EXPECT_NEAR(*detection[0]->value, 0.6, 1e-9);
  // Round trips: the flag on both memories, then the host-signalled semaphore; each has its
  // rounds answered and p50, p99, max.
  const auto trips = find(o, "round_trip");
  ASSERT_EQ(trips.size(), 12u);
  for (const CheckRow* r : trips) {
    if (r->metric == "rounds answered") {
      EXPECT_EQ(r->verdict, Verdict::pass) << r->config;
    }
  }
  EXPECT_EQ(trips[8]->config, "semaphore");
  EXPECT_EQ(trips[9]->metric, "p50");
  EXPECT_DOUBLE_EQ(*trips[9]->value, 8.0);
  EXPECT_EQ(executor.paths_seen,
            (std::vector{RoundTripPath::flag, RoundTripPath::flag, RoundTripPath::semaphore}));
  EXPECT_NEAR(*find(o, "overhead").front()->value, 1.0, 1e-9);
  for (const CheckRow* r : find(o, "ordering")) EXPECT_EQ(r->verdict, Verdict::pass);
  // The sweeps ran without stamps (timestamps sufficed); the overhead pairs alternate.
  EXPECT_FALSE(executor.settings_seen.front().stamping);
  EXPECT_TRUE(fs::exists(options_.out_directory / "runs" / "ordering" / "records.csv.gz"));
}

// A poller that loses its CPU around one stamp in 20: the precision rows judge the other
// stamps and pass; the disturbed share (5 %) is past its target on its own row, which names a
// cause: a poller without a CPU of its own (this test's), so the share is the host's, limited
// and flagged, not a failure; the p99 of every stamp shows the late ones.
TEST_F(SelftestRun, DisturbedStampsAreJudgedApartFromThePrecision) {
  KnownClocksExecutor executor;
  executor.disturb_every = 10;  // every 10th frame's start: 1 stamp in 20
  const SelftestOutcome o = run_selftest(executor, options_, log_);
  ASSERT_FALSE(o.failure) << o.failure->message;
  const auto detection = find(o, "poll_detection");
  ASSERT_EQ(detection.size(), 14u);
  for (std::size_t config = 0; config < 2; ++config) {
    const CheckRow* const* rows = &detection[config * 7];
    EXPECT_EQ(rows[0]->verdict, Verdict::pass) << "p50 undisturbed";
    EXPECT_NEAR(*rows[1]->value, 0.6, 1e-9) << "p99 undisturbed: the late stamps are apart";
    EXPECT_EQ(rows[1]->verdict, Verdict::pass);
    EXPECT_EQ(rows[2]->metric, "disturbed share");
    EXPECT_NEAR(*rows[2]->value, 5.0, 1e-9);
    EXPECT_EQ(rows[2]->verdict, Verdict::limited);
    EXPECT_NE(rows[2]->detail.find("; cause: "), std::string::npos) << rows[2]->detail;
    EXPECT_NE(rows[2]->detail.find("limited by this host"), std::string::npos) << rows[2]->detail;
    EXPECT_EQ(rows[3]->metric, "p99 all stamps");
    EXPECT_GT(*rows[3]->value, 40.0) << "every stamp, the late ones too";
  }
  EXPECT_TRUE(o.passed()) << "a limit of the host is not a failure";
  EXPECT_EQ(o.limited(), 2u);
  EXPECT_EQ(limit_lines(o.rows).size(), 2u);
}

// A pinned poller's disturbances with no steal: the interrupts counted on its CPU are the
// cause named, with their rate; unpinned, the row says there is no CPU to count.
TEST(SelftestDetection, APinnedPollersDisturbancesAreNamedByTheInterruptsOnItsCpu) {
  ScenarioTimeline t;
  for (std::uint32_t f = 0; f < 100; ++f) {
    WorkloadFrameRecord r;
    r.frame = f;
    r.frame_t0_us = 2000.0 * f;  // 100 frames over 0.2 s
    r.clk_start_us = 10, r.clk_end_us = 1010;
    r.poll_start_us = 10.5, r.poll_end_us = 1010.5;
    r.poll_start_window_us = r.poll_end_window_us = 0.2;
    if (f % 10 == 0) {
      r.poll_start_us = 30.5;
      r.poll_start_window_us = 20.2;
      r.poll_disturbed = kPollStartDisturbed;
    }
    t.records.push_back(r);
  }
  PollerPlacement pinned;
  pinned.cpu = 3;
  const auto rows = detection_rows(t, "uncached", 0.0, pinned, 1234.4);
  ASSERT_EQ(rows.size(), 7u);
  EXPECT_EQ(rows[2].metric, "disturbed share");
  EXPECT_EQ(rows[2].verdict, Verdict::limited) << "its cause is counted and named";
  EXPECT_NE(rows[2].detail.find("cause: interrupts on the poller's own CPU (1234 per second"),
            std::string::npos)
      << rows[2].detail;
  EXPECT_NE(rows[2].detail.find("other processes' threads there"), std::string::npos)
      << "at normal priority those may have run there too";
  EXPECT_EQ(rows[6].metric, "poller cpu interrupts");
  EXPECT_DOUBLE_EQ(*rows[6].value, 1234.4);
  EXPECT_NE(rows[6].detail.find("on CPU 3"), std::string::npos);
  const auto unpinned = detection_rows(t, "uncached", 0.0, PollerPlacement{});
  EXPECT_NE(unpinned[2].detail.find("(unpinned)"), std::string::npos) << unpinned[2].detail;
  EXPECT_EQ(unpinned[2].verdict, Verdict::limited) << "no CPU of its own to give it";
  EXPECT_FALSE(unpinned[6].value);
  EXPECT_EQ(unpinned[6].detail, "the poller is unpinned");
  // Pinned, with no steal and its CPU's interrupts not counted: nothing measured names the
  // host, so the share fails.
  const auto unexplained = detection_rows(t, "uncached", 0.0, pinned, std::nullopt);
  EXPECT_EQ(unexplained[2].verdict, Verdict::fail) << unexplained[2].detail;
  // Counted, but too few to explain them: 10 a second over 0.2 s is 2 interrupts for 10
  // disturbed stamps (a core kept free of interrupts that still loses its poller).
  const auto too_few = detection_rows(t, "uncached", 0.0, pinned, 10.0);
  EXPECT_EQ(too_few[2].verdict, Verdict::fail) << too_few[2].detail;
  EXPECT_NE(too_few[2].detail.find("cause not found: 2 interrupts"), std::string::npos)
      << too_few[2].detail;
}

// The detection latency's rows against their targets with the statistic's 95 % interval.
TEST(SelftestDetection, ALatencyPastItsTargetIsLimitedWhileTheTargetLiesInsideItsInterval) {
  EXPECT_EQ(judge_upper(0.9, 0.5, 1.0), Verdict::pass);
  EXPECT_EQ(judge_upper(1.02, 0.42, 1.0), Verdict::limited) << "the H100's p50: [0.42, 1.13]";
  EXPECT_EQ(judge_upper(1.5, 1.2, 1.0), Verdict::fail);
  EXPECT_EQ(judge_upper(1.5, std::nullopt, 1.0), Verdict::fail) << "no interval to say";
  auto timeline_of = [](auto delay_us_of) {
    ScenarioTimeline t;
    for (std::uint32_t f = 0; f < 200; ++f) {
      WorkloadFrameRecord r;
      r.frame = f;
      r.clk_start_us = 10, r.clk_end_us = 1010;
      r.poll_start_us = 10 + delay_us_of(f), r.poll_end_us = 1010 + delay_us_of(f + 200);
      r.poll_start_window_us = r.poll_end_window_us = 0.2;
      t.records.push_back(r);
    }
    return t;
  };
  PollerPlacement pinned;
  pinned.cpu = 3;
  // 47.5 % of the stamps at 0.5 µs, the rest at 1.5 µs: the p50 is past the target of 1 µs,
  // and its interval (about the 180th to 220th of 400) reaches down into the fast ones.
  const auto straddling =
      detection_rows(timeline_of([](std::uint32_t i) { return i % 40 < 19 ? 0.5 : 1.5; }),
                     "uncached", 0.0, pinned, 0.0);
  EXPECT_EQ(straddling[0].metric, "p50 undisturbed");
  EXPECT_GT(*straddling[0].value, 1.0);
  EXPECT_EQ(straddling[0].verdict, Verdict::limited) << straddling[0].detail;
  EXPECT_NE(straddling[0].detail.find("lies inside the interval"), std::string::npos);
  // Every stamp 3 µs late: the whole interval is beyond the target.
  const auto late =
      detection_rows(timeline_of([](std::uint32_t) { return 3.0; }), "uncached", 0.0, pinned, 0.0);
  EXPECT_EQ(late[0].verdict, Verdict::fail);
  EXPECT_EQ(late[1].verdict, Verdict::fail);
}

// On a CPU device the timing rows are the CPU scheduler's: limited; ordering and round trips
// are judged as on a GPU.
TEST(SelftestDetection, ACpuDeviceLimitsItsTimingRowsButNeverAnOrderingViolation) {
  std::vector<CheckRow> rows = {
      {"linearity", "duration vs iterations R^2", "ts", "", 0.97, "", ">= 0.99", Verdict::fail,
       "9 points"},
      {"clock_agreement", "start |difference| p50", "poll-ts", "1ms", 33, "us", "<= 10",
       Verdict::fail, ""},
      {"overhead", "duration ratio", "ts", "1ms", 2.12, "", "<= 1.01", Verdict::fail, ""},
      {"ordering", "consumer starts before its producer ends", "poll", "4-link chain", 3, "rows",
       "== 0", Verdict::fail, ""},
      {"round_trip", "rounds answered", "cpu", "cached", 4, "", "== 5", Verdict::fail, ""},
      {"overhead", "duration ratio", "ts", "1ms", 1.0, "", "<= 1.01", Verdict::pass, ""}};
  limit_for_cpu_device(rows);
  EXPECT_EQ(rows[0].verdict, Verdict::limited);
  EXPECT_NE(rows[0].detail.find("9 points; limited by this device"), std::string::npos);
  EXPECT_EQ(rows[1].verdict, Verdict::limited);
  EXPECT_EQ(rows[2].verdict, Verdict::limited);
  EXPECT_EQ(rows[3].verdict, Verdict::fail);
  EXPECT_EQ(rows[4].verdict, Verdict::fail);
  EXPECT_EQ(rows[5].verdict, Verdict::pass);
  const auto lines = limit_lines(rows);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1].rfind("clock_agreement start |difference| p50 (1ms): ", 0), 0u) << lines[1];
}

// A harness that disturbs the frames it measures: the negative control's frames late in 3 of
// 5 frames of every round; its row fails, and the self-test with it. On a CPU device the same
// row is limited (the frames wait on the device's own threads there).
TEST_F(SelftestRun, FailsItsNeutralityRowWhenTheNegativeControlIsIntrusive) {
  KnownClocksExecutor executor;
  executor.disturbed_negative = true;
  const SelftestOutcome o = run_selftest(executor, options_, log_);
  ASSERT_FALSE(o.failure) << o.failure->message;
  const auto neutrality = find(o, "neutrality");
  ASSERT_EQ(neutrality.size(), 1u);
  EXPECT_EQ(neutrality[0]->verdict, Verdict::fail) << neutrality[0]->detail;
  EXPECT_NE(neutrality[0]->detail.find("negative control intrusive"), std::string::npos)
      << neutrality[0]->detail;
  ASSERT_TRUE(neutrality[0]->value.has_value());
  EXPECT_GT(*neutrality[0]->value, 50.0) << "points of late frames over the baseline";
  EXPECT_FALSE(o.passed());
  std::vector<CheckRow> rows = o.rows;
  limit_for_cpu_device(rows);
  for (const CheckRow& r : rows) {
    if (r.check == "neutrality") {
      EXPECT_EQ(r.verdict, Verdict::limited);
    }
  }
}

TEST_F(SelftestRun, CatchesOverlapOverheadAndMissingProbes) {
  KnownClocksExecutor executor;
  executor.overlap_chain = true;
  executor.stamping_cost = 1.05;
  const SelftestOutcome o = run_selftest(executor, options_, log_);
  ASSERT_FALSE(o.failure);
  EXPECT_FALSE(o.passed());
  for (const CheckRow* r : find(o, "ordering")) {
    EXPECT_EQ(r->verdict, Verdict::fail) << r->clock;
    EXPECT_DOUBLE_EQ(*r->value, 3.0 * options_.frames);  // 3 links per frame
  }
  const CheckRow* overhead = find(o, "overhead").front();
  EXPECT_EQ(overhead->verdict, Verdict::fail);
  EXPECT_NEAR(*overhead->value, 1.05, 1e-3);
  const CheckRow* ping = find(o, "round_trip").front();
  EXPECT_EQ(ping->verdict, Verdict::not_applicable);
  EXPECT_NE(ping->detail.find("no ping-pong"), std::string::npos);
}

TEST(SelftestCsv, OneLinePerRowWithVerdicts) {
  const std::vector<CheckRow> rows = {
      {"poll_detection", "p50", "poll-clk", "uncached", 0.6, "us", "<= 2", Verdict::pass, "n"},
      {"round_trip",
       "rounds answered",
       "cpu",
       "cached",
       {},
       "",
       "== 5",
       Verdict::not_applicable,
       "no probe, here"}};
  EXPECT_EQ(selftest_csv(rows),
            "check,metric,clock,config,value,unit,target,verdict,detail\n"
            "poll_detection,p50,poll-clk,uncached,0.6,us,<= 2,pass,n\n"
            "round_trip,rounds answered,cpu,cached,,,== 5,n/a,\"no probe, here\"\n");
  // The columns the results model reads it with (analysis/results.h) are these.
  std::string header;
  for (std::string_view column : kSelftestColumns)
    header += (header.empty() ? "" : ",") + std::string(column);
  EXPECT_EQ(selftest_csv({}), header + "\n");
}

}  // namespace
}  // namespace gpuoverlap
