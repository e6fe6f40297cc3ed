// What one results folder contributes to the results history, without a database: the machine
// it ran on (a fingerprint), the run (its content key, when, with what), and per scenario the
// summaries users compare across runs. Read through the one typed results model
// (analysis/results.h), as every other reader does. No database, no GPU API: unit-tested
// alone, and the store (history_store.h) writes exactly these.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/decision.h"
#include "analysis/results.h"
#include "core/result.h"

namespace gpuoverlap::history {

// Where a run ran. Two runs on the same GPU model, driver, API, OS and CPU have the same
// fingerprint: their series are one. Fields the results lack (older results) read "?".
struct MachineFingerprint {
  std::string gpu;  // "NVIDIA H100 80GB HBM3"
  std::optional<std::int64_t> vendor_id, device_id;
  std::string driver;                     // "NVIDIA 580.159.04"
  std::string api;                        // "Vulkan", "D3D12"
  std::string os;                         // "Linux 6.18.44-..."
  std::string cpu;                        // "Intel(R) Xeon(R) Processor"
  std::optional<std::int64_t> cpu_cores;  // kept, not part of the key: older results lack it
  // Which physical GPU: meta.json's device "uuid" (Vulkan's device UUID), so that the GPUs of
  // one host, and one model on two hosts, are machines of their own; "?" in older results and
  // on D3D12 (whose adapter LUID changes at every boot).
  std::string device_uuid = "?";
  // One text of the fields but the CPU count, the key the store finds a machine by.
  std::string key() const;
  bool operator==(const MachineFingerprint&) const = default;
};

// The fingerprint from a scenario's meta.json ("device", "host").
MachineFingerprint machine_of(const ScenarioMeta& meta);

// One summary number of one scenario: `series` is a workload (or "frame" for the frame-level
// figures), `metric` what of it ("duration_p50_us", "duration_p99_us", "frame_interval_p99_us"
// ...), on `clock` ("poll", "ts", "clk"; "cpu" for the CPU's own figures). `low` and `high`:
// its 95 % interval where it has one; `frames`: how many values it is of. docs/history.md
// lists every metric a run contributes.
struct MetricRow {
  std::string scenario, series, metric, clock;
  double value = 0;
  std::optional<double> low, high;
  std::int64_t frames = 0;
  bool operator==(const MetricRow&) const = default;
};

struct RunRow {
  std::string content_key;  // content_key(): the same results give the same key
  std::string started_at;   // run.json's, else the first scenario's meta.json's; "?" if none
  std::string tool_revision;
  std::string command_line;
  std::string directory;  // the results folder as given, made absolute
  std::int64_t scenarios = 0;
  MachineFingerprint machine;
  std::vector<MetricRow> metrics;
};

// Which way a metric is better, from its name: times ("_us", "_ms"), a study's ratios, tail
// excess and decision are better lower; overlap shares and compile rates higher; self-test rows
// (an R², a count) neither: a step in them is reported, never called worse.
enum class Better { lower, higher, neither };
Better better_of(std::string_view metric);
// Whether a change point's step (its 95 % interval, after / before - 1) is worse for `metric`.
bool step_is_worse(std::string_view metric, double step_low, double step_high);

// A study's decision as a number, for its series ("decision" of a condition, "<endpoint>:decision"
// of one of its primary endpoints): 0 non-intrusive, 1 inconclusive (with or without power),
// 2 intrusive; none for a diagnostic's move.
std::optional<double> decision_code(Decision decision);

// A run's content key: FNV-1a 64 over run.json and every scenario's meta.json and
// summary.csv, in the order run.json lists them, as 16 hex digits. Ingesting the same results
// twice, from wherever they were copied to, finds the same key.
Result<std::string> content_key(const LoadedRun& run);

// The summaries of every scenario: per workload and clock its duration's p50 (with its
// interval) and p99; in a preemption scenario the urgent job's latency (submit to its first
// thread) the same way; per scenario with frames.csv the frame interval's p50 and p99 on the
// CPU; per scenario at the top level its overlap shares and each dependency's gap (what its
// barrier costs) on the report's answer clock; per study condition its primary endpoints'
// effects and decisions (verdict.csv) and its compile rate (verdict.json). An Error (input)
// where a study's verdict.csv is damaged.
Result<std::vector<MetricRow>> metric_rows(const LoadedRun& run);

// Everything above for one loaded results folder. An Error (input) when the folder has no
// scenario, or its scenarios ran on different machines (two `--device` runs in one folder are
// ingested as their own runs, once they are written so).
Result<RunRow> run_row(const LoadedRun& run);

// What a self-test's folder contributes: its machine, a content key over selftest.json and
// selftest.csv, and each row with a value as a metric of scenario "selftest" (series: the
// check and its configuration; metric: what was measured and its unit; clock: the row's).
Result<RunRow> run_row(const LoadedSelftest& selftest);

}  // namespace gpuoverlap::history
