// verdict.csv and verdict.json: what the writer puts in, the one reader gives back, as the
// writer's types; older files read with their defaults; damaged files are errors naming them.
#include "analysis/study_files.h"

#include <gtest/gtest.h>

#include <fstream>

#include "analysis/answers.h"
#include "analysis/report.h"
#include "unit/temp_dir.h"

namespace gpuoverlap {
namespace {

StudyVerdict sample_verdict() {
  StudyVerdict v;
  v.study = "non-intrusiveness";
  v.baseline = "baseline";
  v.rounds = 3;
  v.unit = "round";
  v.tests = 4;
  v.gpu_clock = Clock::ts;
  v.period_us = 8000;
  v.has_control = true;
  v.control_detected = true;
  v.detected_from_threads = 2;
  v.late_line_us = 8400;
  v.stutter_line_us = 12000;
  v.baseline_pacing = PacingSummary{300, 3, 0, 8001.5, 118.25};
  v.summary = "managed: non-intrusive\n";
  v.not_run = {{"eco", "no EcoQoS on Linux"}};

  VerdictRow interval;
  interval.condition = "managed";
  interval.metric = "frame_interval_us";
  interval.baseline_p50 = 8000, interval.p50 = 8010.5;
  interval.ratio_p50 = 1.0013, interval.ci_low = 0.9987, interval.ci_high = 1.0042;
  interval.tail_excess = 0.0021, interval.tail_ci_low = -0.004, interval.tail_ci_high = 0.0075;
  interval.frames = 900, interval.baseline_frames = 900, interval.units = 3;
  interval.pairing = "round";
  interval.decision = Decision::non_intrusive;
  interval.tests = EndpointTests::median;
  interval.effect_us = 10.5, interval.effect_share = 0.0013;
  interval.note = "a note, with a comma";
  VerdictRow wake = interval;
  wake.metric = "wake_max_us";
  wake.role = EndpointRole::diagnostic;
  wake.tests = EndpointTests::tail;
  wake.decision = Decision::diagnostic_worse;
  wake.control = true;
  v.rows = {interval, wake};

  ConditionVerdict managed;
  managed.condition = "managed";
  managed.decision = Decision::non_intrusive;
  managed.frames = 900, managed.active_frames = 850;
  managed.pairing = "round";
  managed.scheduling = "idle, any CPU";
  managed.spec_scheduling = true;
  managed.pacing = PacingSummary{900, 12, 1, 8010, 110};
  managed.progress.condition = "managed";
  managed.progress.compiles = 120, managed.progress.seconds = 30,
  managed.progress.compiles_per_s = 4;
  managed.progress.on_cpu_ms_per_compile = 1.9;
  managed.progress.commit_to_event_ms = {412, 530};
  managed.progress.commits_not_signalled = 1;
  TimeAccount account;
  account.interval = {"interval", 8000, 8010, 10, 2, 18};
  account.phases = {{"woke_late", 5, 9, 4, std::nullopt, std::nullopt}};
  account.frames = 900, account.late_frames = 12;
  account.line = "the interval grew 10 µs: woke late +4 µs";
  managed.time_account = account;
  SchedAccount sched;
  sched.rounds = 3, sched.frames = 900, sched.runnable_ms = 12.5, sched.to_background_ms = 8.1;
  sched.run_delay_ms = 12.75;
  sched.most_way = "after it yielded, until the next tick";
  sched.most_times = 140, sched.most_ms = 7.9, sched.most_p50_ms = 3.9;
  sched.line = "the kernel's record (3 rounds, 900 frames): ...";
  managed.sched = sched;
  v.baseline_sched = sched;
  v.baseline_sched->to_background_ms = 0;
  managed.burst_note = "";
  ConditionVerdict control = managed;
  control.condition = "unmanaged-2";
  control.control = true;
  control.control_threads = 2;
  control.decision = Decision::intrusive;
  control.time_account.reset();
  control.sched.reset();
  control.pacing.reset();
  v.conditions = {managed, control};
  v.doses = {{"unmanaged-2", 2, Decision::intrusive, "frame_interval_us", 1.2, 0.05}};
  return v;
}

class StudyFiles : public TempDir {
 protected:
  void SetUp() override {
    TempDir::SetUp();
    std::filesystem::create_directories(dir_);
  }
};

void write(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// A run of one background study's one round, its folder made: where verdict.json goes.
LoadedRun one_study_round(const std::filesystem::path& dir) {
  LoadedRun run;
  run.directory = dir;
  LoadedScenario round;
  round.name = "study/base/round-1";
  round.directory = dir / "study" / "base" / "round-1";
  round.study = StudyMembership{"study", "base", StudyKind::background, 1};
  run.scenarios = {round};
  std::filesystem::create_directories(round.directory);
  return run;
}

TEST_F(StudyFiles, VerdictCsvReadsBackAsTheRowsWritten) {
  const StudyVerdict v = sample_verdict();
  write(dir_ / "verdict.csv", verdict_csv(v));
  const auto rows = load_verdict_csv(dir_ / "verdict.csv");
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  ASSERT_EQ(rows->size(), 2u);
  for (std::size_t i = 0; i < rows->size(); ++i) {
    // The file keeps four decimals: what it wrote is what comes back.
    const VerdictRow& back = (*rows)[i];
    const VerdictRow& sent = v.rows[i];
    EXPECT_EQ(back.condition, sent.condition);
    EXPECT_EQ(back.metric, sent.metric);
    EXPECT_EQ(back.role, sent.role);
    EXPECT_EQ(back.tests, sent.tests);
    EXPECT_EQ(back.decision, sent.decision);
    EXPECT_EQ(back.control, sent.control);
    EXPECT_EQ(back.note, sent.note);
    EXPECT_EQ(back.frames, sent.frames);
    EXPECT_EQ(back.units, sent.units);
    EXPECT_NEAR(*back.ratio_p50, *sent.ratio_p50, 1e-4);
    EXPECT_NEAR(*back.tail_ci_high, *sent.tail_ci_high, 1e-4);
    EXPECT_FALSE(back.ratio_p99) << "empty in the file: no value";
  }
  // Written again, the rows read back make the same file.
  StudyVerdict again;
  again.rows = *rows;
  EXPECT_EQ(verdict_csv(again), verdict_csv(v));
}

TEST_F(StudyFiles, AnOlderVerdictCsvWithoutRoleOrTestsReadsEveryRowAsPrimaryOnMedianAndTail) {
  write(dir_ / "verdict.csv",
        "condition,metric,baseline_p50,p50,ratio_p50,ci_low,ci_high,baseline_p99,p99,ratio_p99,"
        "verdict,p99_ci_low,p99_ci_high,rank_p,frames,baseline_frames,control,note\n"
        "managed,cpu_frame_us,10,10.1,1.01,0.99,1.03,12,12.2,1.01,non-intrusive,,,,300,300,0,\n");
  const auto rows = load_verdict_csv(dir_ / "verdict.csv");
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ(rows->front().role, EndpointRole::primary);
  EXPECT_EQ(rows->front().tests, EndpointTests::median_and_tail);
  EXPECT_FALSE(rows->front().tail_excess) << "a column the version lacked: no value";
}

TEST_F(StudyFiles, ADamagedVerdictCsvIsAnErrorNamingTheFileAndWhere) {
  const std::filesystem::path file = dir_ / "verdict.csv";
  std::string csv = verdict_csv(sample_verdict());
  csv.replace(csv.find(",non-intrusive,"), 15, ",harmless,");
  write(file, csv);
  auto rows = load_verdict_csv(file);
  ASSERT_FALSE(rows.ok());
  EXPECT_NE(rows.error().message.find(file.string()), std::string::npos) << rows.error().message;
  EXPECT_NE(rows.error().message.find("'harmless' is none of"), std::string::npos)
      << rows.error().message;
  write(file, "condition,what\nx,y\n");
  EXPECT_FALSE(load_verdict_csv(file).ok()) << "not a verdict table";
  EXPECT_FALSE(load_verdict_csv(dir_ / "missing.csv").ok());
}

TEST_F(StudyFiles, VerdictJsonReadsBackAsTheWritersTypes) {
  const StudyVerdict v = sample_verdict();
  VerdictSettings settings;
  settings.p50_margin = 0.02;
  settings.late_tolerance_us = 250;
  nlohmann::json json = verdict_json(v, settings);
  json["progress"] = study_rounds_json({5, 3, 42.5, 600, 8, true, "decided"});
  write(dir_ / "verdict.json", json.dump(2));
  const auto loaded = load_verdict_json(dir_ / "verdict.json");
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  const StudyVerdict& back = loaded->verdict;
  EXPECT_EQ(back.study, v.study);
  EXPECT_EQ(back.rounds, 3u);
  EXPECT_EQ(back.detected_from_threads, 2u);
  EXPECT_EQ(back.period_us, 8000);
  EXPECT_EQ(back.not_run, v.not_run);
  ASSERT_TRUE(back.baseline_pacing);
  EXPECT_EQ(back.baseline_pacing->late, 3u);
  EXPECT_EQ(back.summary, v.summary);
  ASSERT_EQ(back.conditions.size(), 2u);
  const ConditionVerdict& managed = back.conditions[0];
  EXPECT_EQ(managed.decision, Decision::non_intrusive);
  EXPECT_EQ(managed.active_frames, 850u);
  EXPECT_TRUE(managed.spec_scheduling);
  EXPECT_EQ(managed.progress.compiles_per_s, 4);
  EXPECT_EQ(managed.progress.on_cpu_ms_per_compile, 1.9);
  EXPECT_FALSE(managed.progress.kernel_share);
  EXPECT_EQ(managed.progress.commit_to_event_ms, (std::vector<double>{412, 530}));
  EXPECT_EQ(managed.progress.commits_not_signalled, 1u);
  ASSERT_TRUE(managed.time_account);
  EXPECT_EQ(managed.time_account->line, v.conditions[0].time_account->line);
  ASSERT_EQ(managed.time_account->phases.size(), 1u);
  EXPECT_EQ(managed.time_account->phases[0].phase, "woke_late");
  EXPECT_FALSE(managed.time_account->phases[0].low_us);
  EXPECT_EQ(managed.time_account->interval.high_us, 18);
  // The kernel's record, where the rounds had it; absent where they had not.
  ASSERT_TRUE(managed.sched);
  EXPECT_EQ(managed.sched->rounds, 3u);
  EXPECT_EQ(managed.sched->runnable_ms, 12.5);
  EXPECT_EQ(managed.sched->run_delay_ms, 12.75);
  EXPECT_EQ(managed.sched->most_times, 140u);
  EXPECT_EQ(managed.sched->line, v.conditions[0].sched->line);
  EXPECT_FALSE(back.conditions[1].sched);
  ASSERT_TRUE(back.baseline_sched);
  EXPECT_EQ(back.baseline_sched->to_background_ms, 0);
  EXPECT_TRUE(back.conditions[1].control);
  EXPECT_EQ(back.conditions[1].decision, Decision::intrusive);
  EXPECT_FALSE(back.conditions[1].time_account);
  ASSERT_EQ(back.doses.size(), 1u);
  EXPECT_EQ(back.doses[0].threads, 2u);
  EXPECT_EQ(back.doses[0].metric, "frame_interval_us");
  EXPECT_EQ(loaded->has_compile_rate, (std::vector<bool>{true, true}));
  EXPECT_EQ(loaded->settings.p50_margin, 0.02);
  EXPECT_EQ(loaded->settings.late_tolerance_us, 250);
  EXPECT_EQ(loaded->settings.min_units, VerdictSettings{}.min_units);
  ASSERT_TRUE(loaded->rounds);
  EXPECT_EQ(loaded->rounds->run, 3u);
  EXPECT_EQ(loaded->rounds->stop, "decided");
  // Written again from what was read, the file says the same.
  EXPECT_EQ(verdict_json(back, loaded->settings)["conditions"],
            verdict_json(v, settings)["conditions"]);
}

TEST_F(StudyFiles, AnOlderVerdictJsonKeepsTheDefaultsOfWhatItLacked) {
  write(dir_ / "verdict.json", R"json({"study": "s", "conditions": [
    {"condition": "managed", "verdict": "inconclusive (no power)", "control": false}]})json");
  const auto loaded = load_verdict_json(dir_ / "verdict.json");
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  ASSERT_EQ(loaded->verdict.conditions.size(), 1u);
  EXPECT_EQ(loaded->verdict.conditions[0].decision, Decision::no_power);
  EXPECT_FALSE(loaded->verdict.conditions[0].pacing);
  EXPECT_EQ(loaded->has_compile_rate, std::vector<bool>{false}) << "no progress: no rate to show";
  EXPECT_FALSE(loaded->rounds);
  EXPECT_FALSE(loaded->verdict.detected_from_threads);
}

TEST_F(StudyFiles, ADamagedVerdictJsonIsAnErrorNamingTheFileAndTheMember) {
  const std::filesystem::path file = dir_ / "verdict.json";
  const auto error_of = [&](const std::string& text) {
    write(file, text);
    const auto loaded = load_verdict_json(file);
    return loaded.ok() ? std::string("(read)") : loaded.error().message;
  };
  EXPECT_NE(error_of("{").find("not JSON"), std::string::npos);
  EXPECT_NE(error_of(R"({"study": "s"})").find("no conditions"), std::string::npos);
  EXPECT_NE(error_of(R"({"conditions": [{"condition": "a", "verdict": "fine"}]})")
                .find("verdict.json.conditions[0].verdict: 'fine' is none of"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"conditions": [{"condition": "a", "verdict": "intrusive",
                         "frames": -3}]})")
                .find("conditions[0].frames: not a whole number"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"conditions": [{"verdict": "intrusive"}]})").find("without a name"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"conditions": [], "settings": {"p50_margin": "x"}})")
                .find("settings.p50_margin: not a finite number"),
            std::string::npos);
  EXPECT_NE(error_of("[]").find(file.string()), std::string::npos);
}

// The report's "No verdict" line names a damaged verdict.json's fault, not only "missing".
TEST_F(StudyFiles, AStudysDamagedVerdictJsonIsNamedWithItsFaultInTheReport) {
  const LoadedRun run = one_study_round(dir_);

  auto studies = read_studies(run);
  ASSERT_EQ(studies.size(), 1u);
  EXPECT_FALSE(studies[0].verdict);
  EXPECT_EQ(no_verdict_reason(run, studies[0]), "`study/verdict.json` is missing or unreadable");

  write(dir_ / "study" / "verdict.json",
        R"({"conditions": [{"condition": "a", "verdict": "fine"}]})");
  studies = read_studies(run);
  ASSERT_EQ(studies.size(), 1u);
  EXPECT_FALSE(studies[0].verdict);
  const std::string reason = no_verdict_reason(run, studies[0]);
  EXPECT_TRUE(reason.starts_with("`study/verdict.json` is unreadable: ")) << reason;
  EXPECT_NE(reason.find("conditions[0].verdict: 'fine' is none of"), std::string::npos) << reason;
  EXPECT_EQ(reason.find(dir_.string()), std::string::npos) << reason;  // named relatively

  write(dir_ / "study" / "verdict.json", verdict_json(sample_verdict(), VerdictSettings{}).dump());
  studies = read_studies(run);
  ASSERT_EQ(studies.size(), 1u);
  EXPECT_TRUE(studies[0].verdict);
  EXPECT_TRUE(studies[0].verdict_error.empty());
}

// Spinners run no compiles: the answer and the study's table say so, not "0.0 compiles/s" as
// for a policy that starved.
TEST_F(StudyFiles, SpinnersAreAConditionWithoutACompileRate) {
  StudyVerdict v = sample_verdict();
  ConditionVerdict spinners = v.conditions[0];
  spinners.condition = "idle-spinners";
  spinners.spinners = true;
  spinners.scheduling = "idle-priority spinners";
  spinners.progress = {};
  spinners.progress.condition = "idle-spinners";
  spinners.decision = Decision::intrusive;
  v.conditions.push_back(spinners);
  const LoadedRun run = one_study_round(dir_);
  write(dir_ / "study" / "verdict.json", verdict_json(v, VerdictSettings{}).dump());
  const ReportInputs inputs{read_studies(run), {}};
  ASSERT_EQ(inputs.studies.size(), 1u);
  ASSERT_TRUE(inputs.studies[0].verdict) << inputs.studies[0].verdict_error;
  const std::string answers = answers_section(run, inputs);
  EXPECT_NE(answers.find("idle-spinners **intrusive** ("), std::string::npos) << answers;
  EXPECT_NE(answers.find("idle-priority spinners, no compiles"), std::string::npos) << answers;
  EXPECT_EQ(answers.find("0.0 compiles/s"), std::string::npos) << answers;
  const std::string page = markdown_report(run).page + markdown_report(run).details;
  EXPECT_NE(page.find("| idle-spinners | intrusive | none (spinners) |"), std::string::npos)
      << page;
}

}  // namespace
}  // namespace gpuoverlap
