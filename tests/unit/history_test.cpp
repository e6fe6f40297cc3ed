// The results history (history/): what a results folder contributes, and the store on both
// engines. Every store test runs on SQLite (a temporary file) and on PostgreSQL: a database of
// its own, made on the server GPUOVERLAP_TEST_POSTGRESQL names (a URI "postgresql://.../DB?..."
// of a role that may create databases; scripts/test.sh starts a throwaway cluster with
// scripts/pg-throwaway.sh and sets it). Without it the PostgreSQL cases fail, saying so.
#include <gtest/gtest.h>
#include <soci/postgresql/soci-postgresql.h>
#include <soci/soci.h>
#include <soci/sqlite3/soci-sqlite3.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <thread>

#include "core/redact.h"
#include "history/history_rows.h"
#include "history/history_store.h"

namespace gpuoverlap::history {
namespace {

namespace fs = std::filesystem;

TEST(HistoryLocation, AFileOrAPostgresqlUriAndNothingElse) {
  const auto file = parse_location("results/history.sqlite");
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(file->engine, Engine::sqlite);
  EXPECT_EQ(file->shown, "results/history.sqlite");
  const auto spaced = parse_location("my runs.sqlite");
  ASSERT_TRUE(spaced.ok());
  EXPECT_EQ(spaced->connect, "db=\"my runs.sqlite\" timeout=30");
  const auto server = parse_location("postgresql://gpu:secret@db.example/history");
  ASSERT_TRUE(server.ok());
  EXPECT_EQ(server->engine, Engine::postgresql);
  EXPECT_EQ(server->shown, "postgresql://gpu:***@db.example/history") << "no password shown";
  EXPECT_TRUE(parse_location("postgres://db/h").ok());
  EXPECT_EQ(parse_location("postgresql://db/h?user=u&password=x@y&sslmode=require")->shown,
            "postgresql://db/h?user=u&password=***&sslmode=require");
  EXPECT_EQ(without_password("--history=postgresql://a:b@c/d"), "--history=postgresql://a:***@c/d");
  EXPECT_EQ(without_password("/results/a:b@c"), "/results/a:b@c");
  for (const char* bad : {"", "postgresql://", "postgresql:///", "mysql://db/h", "a\nb",
                          "my \"runs\".sqlite", " lead.sqlite", "trail.sqlite "}) {
    const auto refused = parse_location(bad);
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_EQ(refused.error().category, ErrorCategory::input) << bad;
  }
}

TEST(HistoryRows, TheMachineIsTheDeviceTheDriverAndTheHost) {
  const nlohmann::json meta = {
      {"device",
       {{"name", "NVIDIA H100 80GB HBM3"},
        {"vendor_id", 4318},
        {"device_id", 9008},
        {"driver_name", "NVIDIA"},
        {"driver_info", "580.159.04"},
        {"api", "Vulkan"}}},
      {"host", {{"kernel", "Linux 6.18"}, {"cpu_model", "Xeon"}, {"logical_cpus", 16}}}};
  const MachineFingerprint m = machine_of(read_scenario_meta(meta));
  EXPECT_EQ(m.gpu, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(m.vendor_id, 4318);
  EXPECT_EQ(m.driver, "NVIDIA 580.159.04");
  EXPECT_EQ(m.api, "Vulkan");
  EXPECT_EQ(m.os, "Linux 6.18");
  EXPECT_EQ(m.cpu_cores, 16);
  EXPECT_EQ(m.key(), "NVIDIA H100 80GB HBM3|4318|9008|NVIDIA 580.159.04|Vulkan|Linux 6.18|Xeon|?")
      << "the CPU count is kept, but results from before it was recorded are the same machine";
  // Two GPUs of one host: the same model, driver and host, machines of their own.
  nlohmann::json second = meta;
  second["device"]["uuid"] = "b1e5c3a8-0000-1111-2222-333344445555";
  EXPECT_EQ(machine_of(read_scenario_meta(second)).device_uuid,
            "b1e5c3a8-0000-1111-2222-333344445555");
  EXPECT_NE(machine_of(read_scenario_meta(second)).key(), m.key());
  // Results older than the keys: every field says it is unknown, none is invented.
  const MachineFingerprint old = machine_of(read_scenario_meta(nlohmann::json::object()));
  EXPECT_EQ(old.gpu, "?");
  EXPECT_FALSE(old.vendor_id);
  EXPECT_EQ(old.driver, "?");
  EXPECT_EQ(old.api, "Vulkan") << "results before the key were Vulkan's";
}

// A results folder of one scenario with the files the key covers.
fs::path write_results(const std::string& name, const std::string& summary) {
  const fs::path dir =
      fs::temp_directory_path() / ("gpuoverlap-history-" + std::to_string(::getpid()) + "-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir / "s");
  std::ofstream(dir / "run.json") << R"({"started_at":"2026-11-26T00:00:00Z"})";
  std::ofstream(dir / "s" / "meta.json") << "{}";
  std::ofstream(dir / "s" / "summary.csv") << summary;
  return dir;
}

TEST(HistoryRows, TheContentKeyFollowsTheFilesNotWhereTheyAre) {
  LoadedRun a, b, c;
  a.directory = write_results("a", "x,1\n");
  b.directory = write_results("b", "x,1\n");
  c.directory = write_results("c", "x,2\n");
  for (LoadedRun* run : {&a, &b, &c}) {
    LoadedScenario s;
    s.name = "s";
    s.directory = run->directory / "s";
    run->scenarios.push_back(s);
  }
  const auto ka = content_key(a), kb = content_key(b), kc = content_key(c);
  ASSERT_TRUE(ka.ok() && kb.ok() && kc.ok());
  EXPECT_EQ(ka->size(), 16u);
  EXPECT_EQ(*ka, *kb) << "the same results copied elsewhere";
  EXPECT_NE(*ka, *kc) << "one summary number changed";
  for (const LoadedRun* run : {&a, &b, &c}) fs::remove_all(run->directory);
}

// One ok record of a synthetic scenario, on the timestamp clock.
RecordRow record(std::uint32_t frame, const std::string& workload, const std::string& queue,
                 QueueType type, double start_us, double end_us, const std::string& depends_on = "",
                 const std::string& barrier = "") {
  RecordRow r;
  r.frame = frame;
  r.workload = workload;
  r.queue = queue;
  r.queue_type = type;
  r.depends_on = depends_on;
  r.barrier = barrier;
  r.ts_start_us = start_us;
  r.ts_end_us = end_us;
  return r;
}

const MetricRow* find_metric(const std::vector<MetricRow>& rows, const std::string& series,
                             const std::string& metric) {
  for (const MetricRow& m : rows)
    if (m.series == series && m.metric == metric) return &m;
  return nullptr;
}

// The report's answers as series: A (DIRECT) and B (COMPUTE) overlap in frame 0 only; C waits
// for A behind a barrier on the same queue, 2 µs after it in frame 0 and 4 µs in frame 1.
TEST(HistoryRows, OverlapSharesAndBarrierGapsOnTheAnswerClock) {
  LoadedRun run;
  run.directory = "/results/run";
  LoadedScenario s;
  s.name = "default";
  s.directory = run.directory / "default";
  s.meta_json = nlohmann::json::object();
  s.workloads = {"A", "B", "C"};
  s.records = {record(0, "A", "direct", QueueType::direct, 0, 10),
               record(0, "B", "compute", QueueType::compute, 5, 15),
               record(0, "C", "direct", QueueType::direct, 12, 20, "A", "legacy"),
               record(1, "A", "direct", QueueType::direct, 0, 10),
               record(1, "B", "compute", QueueType::compute, 30, 40),
               record(1, "C", "direct", QueueType::direct, 14, 20, "A", "legacy")};
  run.scenarios.push_back(s);
  const auto rows = metric_rows(run);
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  const MetricRow* cross = find_metric(*rows, "frame", "cross_queue_overlap_pct");
  ASSERT_NE(cross, nullptr);
  EXPECT_EQ(cross->clock, "ts") << "timestamps are the answer clock where a scenario has them";
  EXPECT_DOUBLE_EQ(cross->value, 50.0);
  EXPECT_EQ(cross->frames, 2);
  ASSERT_TRUE(cross->low && cross->high);
  EXPECT_NEAR(*cross->low, 9.45, 0.01) << "Wilson's interval of 1 in 2";
  EXPECT_NEAR(*cross->high, 90.55, 0.01);
  const MetricRow* same = find_metric(*rows, "frame", "same_queue_overlap_pct");
  ASSERT_NE(same, nullptr) << "A and C share the DIRECT queue";
  EXPECT_DOUBLE_EQ(same->value, 0.0);
  const MetricRow* gap = find_metric(*rows, "A > C", "barrier_gap_p50_us");
  ASSERT_NE(gap, nullptr);
  EXPECT_DOUBLE_EQ(gap->value, 3.0);
  EXPECT_EQ(gap->frames, 2);
  EXPECT_NE(find_metric(*rows, "A > C", "barrier_gap_p99_us"), nullptr);
  // Within a study or a matrix a scenario is not asked the report's questions.
  run.scenarios.front().directory = run.directory / "study" / "round-1";
  const auto nested = metric_rows(run);
  ASSERT_TRUE(nested.ok());
  EXPECT_EQ(find_metric(*nested, "frame", "cross_queue_overlap_pct"), nullptr);
  EXPECT_EQ(find_metric(*nested, "A > C", "barrier_gap_p50_us"), nullptr);
  EXPECT_NE(find_metric(*nested, "A", "duration_p50_us"), nullptr);
}

// A scenario whose records were never committed (as many under docs/results/ were): only the
// history's ingest reads it, from summary.csv; every other reader refuses it as before.
TEST(HistoryRows, AScenarioWithoutRecordsKeepsItsSummarysNumbers) {
  const fs::path dir =
      fs::temp_directory_path() / ("gpuoverlap-history-" + std::to_string(::getpid()) + "-slim");
  fs::remove_all(dir);
  fs::create_directories(dir / "matrix" / "cell");
  fs::create_directories(dir / "default");
  std::ofstream(dir / "run.json")
      << R"({"started_at":"2026-11-23T00:00:00Z","scenarios":[{"directory":"default"},)"
      << R"({"directory":"matrix/cell"}]})";
  // The oldest summary.csv: fourteen columns, no preemption and no disturbance columns.
  std::ofstream(dir / "default" / "meta.json") << R"({"scenario":{"name":"default"}})";
  std::ofstream(dir / "default" / "summary.csv")
      << "scenario,workload,queue,clock,frames,start_p5_us,start_p50_us,start_p95_us,end_p5_us,"
         "end_p50_us,end_p95_us,duration_p5_us,duration_p50_us,duration_p95_us\n"
         "default,Compute A,direct,poll,100,1,2,3,4,5,6,49.5,50.25,51\n"
         "default,Compute A,direct,ts,98,1,2,3,4,5,6,50.5,51.125,52\n";
  std::ofstream(dir / "default" / "frames.csv")
      << "scenario,frame,cpu_start_us,cpu_frame_us,cpu_submit_us,submit_to_start_us,"
         "poll_gap_max_us,bg_managed,bg_boosted,bg_unmanaged,status,bg_held,frame_interval_us\n"
         "default,0,0,1,1,1,1,0,0,0,ok,0,\n"
         "default,1,0,1,1,1,1,0,0,0,ok,0,1000\n"
         "default,2,0,1,1,1,1,0,0,0,ok,0,3000\n";
  // Today's, of a preemption cell: the load's poll row had disturbed stamps.
  std::ofstream(dir / "matrix" / "cell" / "meta.json")
      << R"({"scenario":{"name":"matrix/cell"},"preemption":{}})";
  std::ofstream(dir / "matrix" / "cell" / "summary.csv")
      << "scenario,workload,queue,clock,frames,start_p5_us,start_p50_us,start_p95_us,end_p5_us,"
         "end_p50_us,end_p95_us,duration_p5_us,duration_p50_us,duration_p95_us,flagged_rows,"
         "latency_p50_us,latency_p95_us,latency_p99_us,latency_max_us,deadline_misses,"
         "load_slowdown,preemption,poll_disturbed,poll_window_p99_us\n"
         "matrix/cell,load,load,poll,40,1,2,3,4,5,6,7,8000,9,0,,,,,,,,3,12.5\n"
         "matrix/cell,load,load,ts,40,1,2,3,4,5,6,7,8100,9,0,,,,,,,,,\n"
         "matrix/cell,urgent,urgent,poll,30,1,2,3,4,5,6,7,20,9,0,310.5,360,369,370,0,1.0,"
         "coarse,0,8.5\n";

  // Every reader but the history's ingest refuses it, as it always has.
  const auto refused = load_results(dir);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("records.csv.gz"), std::string::npos)
      << refused.error().message;
  const auto run = load_results(dir, RecordsRequired::no);
  ASSERT_TRUE(run.ok()) << run.error().message;
  ASSERT_EQ(run->scenarios.size(), 2u);
  const LoadedScenario& plain = run->scenarios[0];
  EXPECT_FALSE(plain.has_records);
  EXPECT_TRUE(plain.records.empty());
  EXPECT_EQ(plain.name, "default");
  EXPECT_EQ(plain.workloads, std::vector<std::string>{"Compute A"});
  EXPECT_EQ(plain.frames.size(), 3u);
  const auto rows = metric_rows(*run);
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  auto find = [&](const std::string& scenario, const std::string& series, const std::string& metric,
                  const std::string& clock) -> const MetricRow* {
    for (const MetricRow& m : *rows)
      if (m.scenario == scenario && m.series == series && m.metric == metric && m.clock == clock)
        return &m;
    return nullptr;
  };
  const MetricRow* poll = find("default", "Compute A", "duration_p50_us", "poll");
  ASSERT_NE(poll, nullptr);
  EXPECT_DOUBLE_EQ(poll->value, 50.25);
  EXPECT_EQ(poll->frames, 100);
  EXPECT_FALSE(poll->low || poll->high) << "a summary keeps no interval";
  const MetricRow* ts = find("default", "Compute A", "duration_p50_us", "ts");
  ASSERT_NE(ts, nullptr);
  EXPECT_DOUBLE_EQ(ts->value, 51.125);
  EXPECT_EQ(ts->frames, 98);
  EXPECT_EQ(find("default", "Compute A", "duration_p99_us", "poll"), nullptr)
      << "summary.csv has p5 and p95, no p99";
  const MetricRow* interval = find("default", "frame", "frame_interval_p50_us", "cpu");
  ASSERT_NE(interval, nullptr) << "frames.csv is read as with records";
  EXPECT_DOUBLE_EQ(interval->value, 2000.0);
  EXPECT_EQ(find("matrix/cell", "load", "duration_p50_us", "poll"), nullptr)
      << "the summary counted the disturbed frames the records path leaves out";
  ASSERT_NE(find("matrix/cell", "load", "duration_p50_us", "ts"), nullptr);
  const MetricRow* latency = find("matrix/cell", "urgent", "latency_p50_us", "poll");
  ASSERT_NE(latency, nullptr);
  EXPECT_DOUBLE_EQ(latency->value, 310.5);
  const MetricRow* tail = find("matrix/cell", "urgent", "latency_p99_us", "poll");
  ASSERT_NE(tail, nullptr);
  EXPECT_DOUBLE_EQ(tail->value, 369.0);
  for (const MetricRow& m : *rows)
    EXPECT_EQ(m.metric.find("overlap"), std::string::npos)
        << "no records, no overlap: " << m.metric;
  const auto row = run_row(*run);
  ASSERT_TRUE(row.ok()) << row.error().message;
  EXPECT_EQ(row->started_at, "2026-11-23T00:00:00Z");

  // One scenario's directory without run.json is a run of its own, as one with records is.
  const auto alone = load_results(dir / "default", RecordsRequired::no);
  ASSERT_TRUE(alone.ok()) << alone.error().message;
  ASSERT_EQ(alone->scenarios.size(), 1u);
  EXPECT_FALSE(alone->scenarios[0].has_records);
  const auto alone_refused = load_results(dir / "default");
  ASSERT_FALSE(alone_refused.ok());
  EXPECT_NE(alone_refused.error().message.find("no run.json and no records.csv.gz"),
            std::string::npos)
      << alone_refused.error().message;

  // Without summary.csv either, nothing to keep: refused as without RecordsRequired::no.
  fs::remove(dir / "default" / "summary.csv");
  const auto bare = load_results(dir, RecordsRequired::no);
  ASSERT_FALSE(bare.ok());
  EXPECT_NE(bare.error().message.find("records.csv.gz"), std::string::npos) << bare.error().message;
  // A damaged summary is refused naming its file, line and column.
  std::ofstream(dir / "default" / "summary.csv")
      << "scenario,workload,queue,clock,frames,start_p5_us,start_p50_us,start_p95_us,end_p5_us,"
         "end_p50_us,end_p95_us,duration_p5_us,duration_p50_us,duration_p95_us\n"
         "default,Compute A,direct,sundial,100,1,2,3,4,5,6,49.5,50.25,51\n";
  const auto damaged = load_results(dir, RecordsRequired::no);
  ASSERT_FALSE(damaged.ok());
  EXPECT_NE(damaged.error().message.find("summary.csv"), std::string::npos)
      << damaged.error().message;
  EXPECT_NE(damaged.error().message.find("sundial"), std::string::npos) << damaged.error().message;
  std::ofstream(dir / "default" / "summary.csv") << "scenario,workload,clock\n";
  const auto short_columns = load_results(dir, RecordsRequired::no);
  ASSERT_FALSE(short_columns.ok());
  EXPECT_NE(short_columns.error().message.find("missing column"), std::string::npos)
      << short_columns.error().message;
  fs::remove_all(dir);
}

// A preemption scenario's urgent latency from its records counts as the preemption analysis
// (and so summary.csv) does: an ok submission's start needs no end.
TEST(HistoryRows, AnUrgentStartWithoutItsEndIsStillALatency) {
  LoadedRun run;
  run.directory = "/results/run";
  LoadedScenario s;
  s.name = "cell";
  s.directory = run.directory / "cell";
  s.meta_json = {{"preemption", nlohmann::json::object()}};
  read_meta(s);
  s.workloads = {"urgent"};
  for (std::uint32_t frame = 0; frame < 3; ++frame)
    s.records.push_back(record(frame, "urgent", "urgent", QueueType::compute, 100.0 * (frame + 1),
                               100.0 * (frame + 1) + 5));
  s.records.back().ts_end_us.reset();  // its end was never seen
  run.scenarios.push_back(s);
  const auto rows = metric_rows(run);
  ASSERT_TRUE(rows.ok());
  const MetricRow* latency = find_metric(*rows, "urgent", "latency_p50_us");
  ASSERT_NE(latency, nullptr);
  EXPECT_EQ(latency->frames, 3);
  EXPECT_DOUBLE_EQ(latency->value, 200.0);
  const MetricRow* duration = find_metric(*rows, "urgent", "duration_p50_us");
  ASSERT_NE(duration, nullptr);
  EXPECT_EQ(duration->frames, 2) << "a duration needs both ends";
}

TEST(HistoryRows, EachMetricSaysWhichWayIsWorse) {
  EXPECT_EQ(better_of("duration_p50_us"), Better::lower);
  EXPECT_EQ(better_of("frame_interval_us:ratio_p50"), Better::lower);
  EXPECT_EQ(better_of("gpu_span_us:tail_excess_pts"), Better::lower);
  EXPECT_EQ(better_of("decision"), Better::lower);
  EXPECT_EQ(better_of("cross_queue_overlap_pct"), Better::higher);
  EXPECT_EQ(better_of("compiles_per_s"), Better::higher);
  EXPECT_EQ(better_of("duration vs iterations R^2"), Better::neither);
  EXPECT_EQ(better_of("start |poll-ts| p50 [us]"), Better::neither) << "self-test rows";
  EXPECT_TRUE(step_is_worse("latency_p50_us", 0.02, 0.08));
  EXPECT_FALSE(step_is_worse("latency_p50_us", -0.01, 0.08)) << "an interval across 0";
  EXPECT_FALSE(step_is_worse("latency_p50_us", -0.08, -0.02)) << "faster";
  EXPECT_TRUE(step_is_worse("cross_queue_overlap_pct", -0.5, -0.2)) << "less overlap";
  EXPECT_FALSE(step_is_worse("cross_queue_overlap_pct", 0.2, 0.5));
  EXPECT_FALSE(step_is_worse("duration vs groups R^2", 0.2, 0.5));
  EXPECT_EQ(decision_code(Decision::non_intrusive), 0.0);
  EXPECT_EQ(decision_code(Decision::no_power), 1.0);
  EXPECT_EQ(decision_code(Decision::inconclusive), 1.0);
  EXPECT_EQ(decision_code(Decision::intrusive), 2.0);
  EXPECT_FALSE(decision_code(Decision::diagnostic_worse));
}

// A self-test's folder as `gpuoverlap selftest` writes it.
fs::path write_selftest(const std::string& name, const std::string& csv,
                        const std::string& host = R"({"kernel":"Linux 6.18","cpu_model":"Xeon"})") {
  const fs::path dir = fs::temp_directory_path() /
                       ("gpuoverlap-history-selftest-" + std::to_string(::getpid()) + "-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "selftest.json")
      << R"({"device":{"name":"NVIDIA H100","vendor_id":4318,"device_id":9008,)"
      << R"("driver_name":"NVIDIA","driver_info":"580"},"host":)" << host
      << R"(,"tool":{"git_revision":"abc"},"started_at":"2026-11-26T08:00:00Z",)"
      << R"("command_line":"gpuoverlap selftest","passed":true})";
  std::ofstream(dir / "selftest.csv") << csv;
  return dir;
}

TEST(HistoryRows, ASelftestIsARunOfItsMachine) {
  const std::string header = "check,metric,clock,config,value,unit,target,verdict,detail\n";
  const fs::path dir = write_selftest(
      "ok", header +
                "poll_detection,detection p99,poll-clk,uncached,1.2,us,<= 2,pass,1000 stamps\n"
                "poll_detection,detection p99,poll-clk,uncached,9,us,<= 2,fail,a repeat\n"
                "round_trip,round trip p50,cpu,semaphore,8.4,us,,info,\n"
                "linearity,saturation groups,,\"64 iterations, 1..4096 groups\",32,groups,,info,\n"
                "round_trip,rounds answered,cpu,cached,,,== 1000,n/a,no probe\n");
  ASSERT_TRUE(is_selftest(dir));
  const auto loaded = load_selftest(dir);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  const auto row = run_row(*loaded);
  ASSERT_TRUE(row.ok()) << row.error().message;
  EXPECT_EQ(row->machine.gpu, "NVIDIA H100");
  EXPECT_EQ(row->machine.os, "Linux 6.18") << "the same machine as its runs";
  EXPECT_EQ(row->started_at, "2026-11-26T08:00:00Z");
  EXPECT_EQ(row->tool_revision, "abc");
  EXPECT_EQ(row->command_line, "gpuoverlap selftest");
  ASSERT_EQ(row->metrics.size(), 3u) << "a row without a value and a repeat are not kept";
  EXPECT_EQ(row->metrics[0], (MetricRow{"selftest",
                                        "poll_detection uncached",
                                        "detection p99 [us]",
                                        "poll-clk",
                                        1.2,
                                        {},
                                        {},
                                        0}));
  EXPECT_EQ(row->metrics[2].series, "linearity 64 iterations, 1..4096 groups");
  EXPECT_EQ(row->metrics[2].clock, "-");
  const auto again = run_row(*load_selftest(dir));
  EXPECT_EQ(again->content_key, row->content_key);
  // Damaged: a value that is not a number, a missing column, a host that is not an object.
  const fs::path bad_number =
      write_selftest("nan", header + "poll_detection,p99,poll-clk,uncached,fast,us,,info,\n");
  const auto refused = load_selftest(bad_number);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("selftest.csv: line 2, column value"), std::string::npos)
      << refused.error().message;
  const fs::path bad_header = write_selftest("header", "check,metric\npoll,p99\n");
  EXPECT_FALSE(load_selftest(bad_header).ok());
  const fs::path bad_host = write_selftest("host", header, "\"Linux\"");
  const auto host = load_selftest(bad_host);
  ASSERT_FALSE(host.ok());
  EXPECT_NE(host.error().message.find("'host' must be an object"), std::string::npos)
      << host.error().message;
  const fs::path empty = write_selftest("empty", header);
  EXPECT_FALSE(run_row(*load_selftest(empty)).ok()) << "nothing measured, nothing kept";
  for (const fs::path& d : {dir, bad_number, bad_header, bad_host, empty}) fs::remove_all(d);
}

// A run as the store takes it, with names that are SQL in another context: data here.
RunRow sample_run(const std::string& key, const std::string& gpu = "GPU 'A'; --") {
  RunRow run;
  run.content_key = key;
  run.started_at = "2026-11-26T00:00:00Z";
  run.tool_revision = "abc";
  run.command_line = "gpuoverlap run --all";
  run.directory = "/results/" + key;
  run.scenarios = 2;
  run.machine.gpu = gpu;
  run.machine.vendor_id = 4318;
  run.machine.driver = "NVIDIA 580";
  run.machine.api = "Vulkan";
  run.machine.os = "Linux";
  run.machine.cpu = "Xeon";
  run.metrics = {
      {"it's; DROP TABLE runs; --", "Compute A", "duration_p50_us", "ts", 101.5, 99.0, 104.0, 200},
      {"it's; DROP TABLE runs; --", "Compute A", "duration_p99_us", "ts", 130.0, {}, {}, 200},
      {"default", "\"quoted\"", "duration_p50_us", "poll", 55.0, {}, 60.0, 10}};
  return run;
}

class HistoryStore : public ::testing::TestWithParam<Engine> {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    const std::string name =
        "gpuoverlap_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
    if (GetParam() == Engine::sqlite) {
      file_ = fs::temp_directory_path() / (name + ".sqlite");
      fs::remove(file_);
      text_ = file_.string();
      return;
    }
    const char* server = std::getenv("GPUOVERLAP_TEST_POSTGRESQL");
    ASSERT_NE(server, nullptr)
        << "GPUOVERLAP_TEST_POSTGRESQL is not set: run scripts/test.sh, or start a server with "
           "scripts/pg-throwaway.sh start and export the URI it prints";
    server_ = server;
    // A database of this test's own: "postgresql://.../DB?..." with DB replaced.
    const std::size_t slash = server_.find('/', server_.find("://") + 3);
    ASSERT_NE(slash, std::string::npos) << server_;
    const std::size_t query = server_.find('?', slash);
    text_ = server_.substr(0, slash + 1) + name +
            (query == std::string::npos ? "" : server_.substr(query));
    database_ = name;
    soci::session admin(soci::postgresql, server_);
    admin << "CREATE DATABASE " + name;  // a name made above, not input
  }
  void TearDown() override {
    if (!file_.empty()) {
      for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(file_.string() + suffix);
    } else if (!database_.empty()) {
      soci::session admin(soci::postgresql, server_);
      admin << "DROP DATABASE IF EXISTS " + database_ + " WITH (FORCE)";
    }
  }
  Store open() {
    auto location = parse_location(text_);
    EXPECT_TRUE(location.ok());
    auto store = Store::open(*location);
    if (!store.ok()) throw std::runtime_error(store.error().message);
    return std::move(*store);
  }
  fs::path file_;
  std::string server_, database_, text_;
};

TEST_P(HistoryStore, ARunIsKeptOnceWithItsMachineAndMetrics) {
  Store store = open();
  EXPECT_EQ(store.schema_version(), kSchemaVersion);
  const RunRow run = sample_run("k1");
  const auto first = store.ingest(run);
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_TRUE(first->added);
  EXPECT_EQ(first->metrics, 3u);
  const auto again = store.ingest(run);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_FALSE(again->added) << "the same content key changes nothing";
  EXPECT_EQ(again->run_id, first->run_id);
  // A second run on the same machine: one machine, two runs.
  ASSERT_TRUE(store.ingest(sample_run("k2")).ok());
  Store reopened = open();  // and it is all there after reopening
  const auto runs = reopened.runs();
  ASSERT_TRUE(runs.ok()) << runs.error().message;
  ASSERT_EQ(runs->size(), 2u);
  EXPECT_EQ((*runs)[0].content_key, "k1");
  EXPECT_EQ((*runs)[0].metrics, 3);
  EXPECT_EQ((*runs)[0].command_line, "gpuoverlap run --all");
  const auto machines = reopened.machines();
  ASSERT_TRUE(machines.ok()) << machines.error().message;
  ASSERT_EQ(machines->size(), 1u);
  EXPECT_EQ((*machines)[0].fingerprint, run.machine) << "names with quotes are data";
  EXPECT_EQ((*machines)[0].runs, 2);
  const auto metrics = reopened.metrics(first->run_id);
  ASSERT_TRUE(metrics.ok()) << metrics.error().message;
  std::vector<MetricRow> expected = run.metrics;
  std::sort(expected.begin(), expected.end(), [](const MetricRow& a, const MetricRow& b) {
    return std::tie(a.scenario, a.series, a.metric, a.clock) <
           std::tie(b.scenario, b.series, b.metric, b.clock);
  });
  EXPECT_EQ(*metrics, expected) << "every number, interval side and NULL as it went in";
}

// Two processes' worth of ingests at once, each with its own connection: the same runs from
// both sides and different ones. None lost, none doubled.
TEST_P(HistoryStore, IngestsAtOnceLoseAndDoubleNothing) {
  // Both open a history that does not exist yet: one makes its tables, the other waits.
  std::atomic<int> failures{0};
  auto ingest = [&](int side) {
    Store store = open();
    for (int i = 0; i < 10; ++i) {
      if (!store.ingest(sample_run("shared-" + std::to_string(i))).ok()) ++failures;
      if (!store
               .ingest(sample_run("own-" + std::to_string(side) + "-" + std::to_string(i),
                                  "GPU " + std::to_string(side)))
               .ok())
        ++failures;
    }
  };
  std::thread a(ingest, 0), b(ingest, 1);
  a.join();
  b.join();
  EXPECT_EQ(failures.load(), 0);
  Store store = open();
  const auto runs = store.runs();
  ASSERT_TRUE(runs.ok()) << runs.error().message;
  EXPECT_EQ(runs->size(), 30u);
  for (const RunEntry& r : *runs) EXPECT_EQ(r.metrics, 3) << r.content_key;
  const auto machines = store.machines();
  ASSERT_TRUE(machines.ok());
  EXPECT_EQ(machines->size(), 3u);
}

// A series: one machine's values of one metric, oldest first, the newest N; a suffix filter
// taken literally ('_' is no wildcard), on both engines alike.
TEST_P(HistoryStore, SeriesAreOneMachinesValuesOldestFirst) {
  Store store = open();
  for (int i = 0; i < 5; ++i) {
    RunRow run = sample_run("s" + std::to_string(i));
    run.started_at = "2026-11-2" + std::to_string(5 - i) + "T00:00:00Z";  // ingested newest first
    run.metrics[0].value = 100 + i;
    ASSERT_TRUE(store.ingest(run).ok());
  }
  ASSERT_TRUE(store.ingest(sample_run("other", "Another GPU")).ok());
  const auto machine = store.machine_id(sample_run("x").machine);
  ASSERT_TRUE(machine.ok() && machine->has_value());
  const SeriesKey key{**machine, "it's; DROP TABLE runs; --", "Compute A", "duration_p50_us", "ts"};
  const auto found = store.series(key, "", 3);
  ASSERT_TRUE(found.ok()) << found.error().message;
  ASSERT_EQ(found->size(), 1u);
  ASSERT_EQ((*found)[0].points.size(), 3u) << "the newest three";
  EXPECT_EQ((*found)[0].points[0].value, 102) << "oldest first: started 2026-11-23";
  EXPECT_EQ((*found)[0].points[2].value, 100) << "the run started last";
  EXPECT_EQ((*found)[0].points[0].low, 99.0);
  const auto every = store.series(SeriesKey{}, "", 0);
  ASSERT_TRUE(every.ok());
  EXPECT_EQ(every->size(), 6u) << "3 series on each of 2 machines";
  const auto medians = store.series(SeriesKey{}, "_p50_us", 0);
  ASSERT_TRUE(medians.ok());
  EXPECT_EQ(medians->size(), 4u);
  EXPECT_TRUE(store.series(SeriesKey{}, "xp50_us", 0)->empty()) << "'_' is not a wildcard";
  EXPECT_TRUE(store.series(SeriesKey{}, "_P50_US", 0)->empty()) << "case counts, on both";
  const auto none = store.machine_id(sample_run("x", "No such GPU").machine);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

TEST_P(HistoryStore, ADatabaseNewerThanThisBinaryIsRefused) {
  { Store create = open(); }
  {
    const auto location = parse_location(text_);
    soci::session raw = location->engine == Engine::sqlite
                            ? soci::session(soci::sqlite3, location->connect)
                            : soci::session(soci::postgresql, location->connect);
    raw << "INSERT INTO schema_version (version) VALUES (" + std::to_string(kSchemaVersion + 1) +
               ")";
  }
  const auto refused = Store::open(*parse_location(text_));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().category, ErrorCategory::input);
  EXPECT_NE(refused.error().message.find("newer than this gpuoverlap knows"), std::string::npos)
      << refused.error().message;
}

// A history that a version-1 gpuoverlap made, with a run in it: opening it migrates it to this
// version, its series read as before, and ingests go on.
TEST_P(HistoryStore, AVersion1HistoryIsMigrated) {
  {
    const auto location = parse_location(text_);
    soci::session raw = location->engine == Engine::sqlite
                            ? soci::session(soci::sqlite3, location->connect)
                            : soci::session(soci::postgresql, location->connect);
    const std::string id =
        location->engine == Engine::sqlite ? "id INTEGER PRIMARY KEY" : "id BIGSERIAL PRIMARY KEY";
    // Version 1's schema, as its migration wrote it.
    raw << "CREATE TABLE schema_version (version BIGINT NOT NULL)";
    raw << "INSERT INTO schema_version (version) VALUES (1)";
    raw << "CREATE TABLE machines (" + id +
               ", fingerprint TEXT NOT NULL UNIQUE, gpu TEXT NOT NULL, vendor_id BIGINT, "
               "device_id BIGINT, driver TEXT NOT NULL, api TEXT NOT NULL, os TEXT NOT NULL, "
               "cpu TEXT NOT NULL, cpu_cores BIGINT)";
    raw << "CREATE TABLE runs (" + id +
               ", content_key TEXT NOT NULL UNIQUE, machine_id BIGINT NOT NULL REFERENCES "
               "machines(id), started_at TEXT NOT NULL, tool_revision TEXT NOT NULL, "
               "command_line TEXT NOT NULL, directory TEXT NOT NULL, scenarios BIGINT NOT NULL, "
               "ingested_at TEXT NOT NULL)";
    raw << "CREATE TABLE metrics (run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE "
           "CASCADE, scenario TEXT NOT NULL, series TEXT NOT NULL, metric TEXT NOT NULL, clock "
           "TEXT NOT NULL, value DOUBLE PRECISION NOT NULL, low DOUBLE PRECISION, high DOUBLE "
           "PRECISION, frames BIGINT NOT NULL, PRIMARY KEY (run_id, scenario, series, metric, "
           "clock))";
    raw << "CREATE INDEX metrics_by_series ON metrics (scenario, series, metric, clock)";
    raw << "CREATE INDEX runs_by_machine ON runs (machine_id, started_at)";
    raw << "INSERT INTO machines (fingerprint, gpu, driver, api, os, cpu) VALUES ('m', 'GPU', "
           "'d', 'Vulkan', 'Linux', 'Xeon')";
    for (int i = 0; i < 3; ++i) {
      // Kept newest first: the series orders by when each run started.
      raw << "INSERT INTO runs (content_key, machine_id, started_at, tool_revision, "
             "command_line, directory, scenarios, ingested_at) VALUES ('v1-" +
                 std::to_string(i) + "', 1, '2026-11-0" + std::to_string(5 - i) +
                 "T00:00:00Z', 'r', 'c', 'd', 1, 'now')";
      raw << "INSERT INTO metrics (run_id, scenario, series, metric, clock, value, frames) "
             "SELECT id, 'default', 'Compute A', 'duration_p50_us', 'ts', " +
                 std::to_string(100 + i) + ", 10 FROM runs WHERE content_key = 'v1-" +
                 std::to_string(i) + "'";
    }
  }
  Store store = open();
  EXPECT_EQ(store.schema_version(), kSchemaVersion);
  const auto found = store.series(SeriesKey{}, "_p50_us", 2);
  ASSERT_TRUE(found.ok()) << found.error().message;
  ASSERT_EQ(found->size(), 1u);
  EXPECT_EQ((*found)[0].key, (SeriesKey{1, "default", "Compute A", "duration_p50_us", "ts"}));
  ASSERT_EQ((*found)[0].points.size(), 2u) << "the newest two";
  EXPECT_EQ((*found)[0].points[0].value, 101);
  EXPECT_EQ((*found)[0].points[0].started_at, "2026-11-04T00:00:00Z");
  EXPECT_EQ((*found)[0].points[1].value, 100);
  ASSERT_TRUE(store.ingest(sample_run("after")).ok());
  Store reopened = open();  // migrated once: opening again changes nothing
  EXPECT_EQ(reopened.schema_version(), kSchemaVersion);
  const auto every = reopened.series(SeriesKey{}, "", 0);
  ASSERT_TRUE(every.ok()) << every.error().message;
  EXPECT_EQ(every->size(), 4u) << "the v1 series and the three of the run ingested after";
  EXPECT_EQ(every->front().points.size(), 3u);
}

// A process killed in the middle of an ingest (everything written, nothing committed) leaves
// no trace: no run, no machine; ingesting again succeeds.
TEST_P(HistoryStore, AnIngestKilledBeforeItsCommitLeavesNothing) {
  { Store create = open(); }
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(ready[0]);
    try {
      Store store = open();
      store.set_before_commit([&] {
        const char byte = 1;
        if (::write(ready[1], &byte, 1) != 1) ::_exit(3);
        for (;;) ::pause();  // until killed
      });
      (void)store.ingest(sample_run("killed"));
    } catch (...) {
    }
    ::_exit(2);  // the hook never ran: the parent sees the pipe close without a byte
  }
  ::close(ready[1]);
  char byte = 0;
  const ssize_t got = ::read(ready[0], &byte, 1);  // the child is inside its transaction
  ::close(ready[0]);
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_EQ(got, 1) << "the child did not reach its commit";
  EXPECT_TRUE(WIFSIGNALED(status));
  Store store = open();
  const auto runs = store.runs();
  ASSERT_TRUE(runs.ok()) << runs.error().message;
  EXPECT_TRUE(runs->empty());
  const auto machines = store.machines();
  ASSERT_TRUE(machines.ok());
  EXPECT_TRUE(machines->empty()) << "the machine went in with the run, and out with it";
  const auto again = store.ingest(sample_run("killed"));
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_TRUE(again->added);
}

INSTANTIATE_TEST_SUITE_P(Engines, HistoryStore,
                         ::testing::Values(Engine::sqlite, Engine::postgresql),
                         [](const ::testing::TestParamInfo<Engine>& info) {
                           return info.param == Engine::sqlite ? "SQLite" : "PostgreSQL";
                         });

TEST(HistoryStoreFaults, AnUnreachableServerOrAnUnwritableFileIsTheEnvironments) {
  const auto server = Store::open(*parse_location("postgresql://nobody@127.0.0.1:1/none"));
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.error().category, ErrorCategory::environment);
  EXPECT_NE(server.error().message.find("could not open it"), std::string::npos)
      << server.error().message;
  const auto file = Store::open(*parse_location("/proc/gpuoverlap-history.sqlite"));
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.error().category, ErrorCategory::environment);
}

// Wrong credentials on a server that is there: the environment's failure, one line naming the
// role, the password never shown.
TEST(HistoryStoreFaults, WrongCredentialsAreTheEnvironmentsWithoutThePassword) {
  const char* server = std::getenv("GPUOVERLAP_TEST_POSTGRESQL");
  ASSERT_NE(server, nullptr) << "GPUOVERLAP_TEST_POSTGRESQL is not set: run scripts/test.sh";
  std::string uri = server;
  // Another role, with a password: "...?host=DIR&user=postgres" -> "...&user=ROLE&password=..."
  const std::size_t user = uri.find("user=");
  if (user != std::string::npos) {
    const std::size_t end = uri.find('&', user);
    uri.erase(user, end == std::string::npos ? std::string::npos : end - user + 1);
    if (!uri.empty() && (uri.back() == '&' || uri.back() == '?')) uri.pop_back();
  }
  uri += (uri.find('?') == std::string::npos ? "?" : "&");
  uri += "user=gpuoverlap_no_such_role&password=not-the-password";
  const auto location = parse_location(uri);
  ASSERT_TRUE(location.ok()) << location.error().message;
  const auto refused = Store::open(*location);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().category, ErrorCategory::environment);
  EXPECT_NE(refused.error().message.find("gpuoverlap_no_such_role"), std::string::npos)
      << refused.error().message;
  EXPECT_EQ(refused.error().message.find("not-the-password"), std::string::npos)
      << refused.error().message;
  EXPECT_EQ(refused.error().message.find('\n'), std::string::npos) << refused.error().message;
}

// Runs `body` in a child process and returns its exit status (100: it did not exit).
int in_child(const std::function<int()>& body) {
  const pid_t child = ::fork();
  if (child == 0) {
    int status = 101;
    try {
      status = body();
    } catch (...) {
    }
    ::_exit(status);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100;
}

// A SQLite history that exists, with one run in it.
fs::path history_with_one_run(const std::string& name) {
  const fs::path file =
      fs::temp_directory_path() / ("gpuoverlap-faults-" + std::to_string(::getpid()) + name);
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(file.string() + suffix);
  auto store = Store::open(*parse_location(file.string()));
  EXPECT_TRUE(store.ok());
  EXPECT_TRUE(store->ingest(sample_run("first")).ok());
  return file;
}

std::size_t runs_in(const fs::path& file) {
  auto store = Store::open(*parse_location(file.string()));
  EXPECT_TRUE(store.ok()) << store.error().message;
  auto runs = store->runs();
  EXPECT_TRUE(runs.ok());
  return runs.ok() ? runs->size() : 0;
}

// The child's failure, as a status: 10 refused at open, 11 at ingest (both the environment's,
// naming the file), 0 written, 12 any other failure; the message goes to `message_file`.
int ingest_status(const fs::path& file, const RunRow& run, const fs::path& message_file) {
  auto note = [&](const Error& e, int status) {
    std::ofstream(message_file) << e.message;
    return e.category == ErrorCategory::environment &&
                   e.message.find(file.string()) != std::string::npos
               ? status
               : 12;
  };
  auto store = Store::open(*parse_location(file.string()));
  if (!store.ok()) return note(store.error(), 10);
  auto kept = store->ingest(run);
  return kept.ok() ? 0 : note(kept.error(), 11);
}

// A history the user may read but not write: one line naming it, the environment's failure
// (exit 3 from the command), the runs in it untouched. Root writes any file whatever its mode,
// so the child drops to nobody first.
TEST(HistoryStoreFaults, AReadOnlyFileIsRefusedAndKeepsItsRuns) {
  const fs::path file = history_with_one_run("-read-only.sqlite");
  const fs::path message = file.string() + ".message";
  fs::permissions(file, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  const int status = in_child([&] {
    if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) return 13;
    return ingest_status(file, sample_run("second"), message);
  });
  std::ifstream in(message);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(status == 10 || status == 11) << status << ": " << text;
  EXPECT_NE(text.find("readonly"), std::string::npos) << text;
  EXPECT_EQ(text.find("INSERT"), std::string::npos) << "the cause, not the statement: " << text;
  fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_EQ(runs_in(file), 1u);
  for (const char* suffix : {"", "-wal", "-shm", ".message"}) fs::remove(file.string() + suffix);
}

// A disk that fills up mid-ingest (a file size limit, which holds for root too): the run is
// refused whole, the history keeps what it had, and once there is room the run goes in.
TEST(HistoryStoreFaults, AFullDiskLeavesNoHalfWrittenRun) {
  const fs::path file = history_with_one_run("-full.sqlite");
  const fs::path message = file.string() + ".message";
  RunRow big = sample_run("big");
  big.metrics.clear();
  for (int i = 0; i < 20000; ++i)
    big.metrics.push_back({"scenario " + std::to_string(i % 50), "workload " + std::to_string(i),
                           "duration_p50_us", "ts", 100.0 + i, 99.0, 101.0 + i, 200});
  const auto limit_bytes = static_cast<rlim_t>(fs::file_size(file) + (64 << 10));
  const int status = in_child([&] {
    std::signal(SIGXFSZ, SIG_IGN);  // a write past the limit fails (EFBIG) instead of killing
    const rlimit limit{limit_bytes, limit_bytes};
    if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) return 13;
    return ingest_status(file, big, message);
  });
  std::ifstream in(message);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(status, 11) << text;
  EXPECT_EQ(runs_in(file), 1u) << "nothing of the big run";
  auto store = Store::open(*parse_location(file.string()));
  ASSERT_TRUE(store.ok());
  const auto kept = store->ingest(big);
  ASSERT_TRUE(kept.ok()) << kept.error().message;
  EXPECT_EQ(kept->metrics, 20000u);
  for (const char* suffix : {"", "-wal", "-shm", ".message"}) fs::remove(file.string() + suffix);
}

}  // namespace
}  // namespace gpuoverlap::history
