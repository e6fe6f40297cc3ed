// The results history: runs kept in a database, one schema on two engines. SQLite (a file,
// nothing to start) is the default; PostgreSQL is for a team or a fleet of GPU machines sharing
// one history. Both through SOCI (Debian's libsoci-dev), one code path: SQL that both engines
// run, every value a bound parameter (names from scenario files are data, never SQL).
//
// Contracts:
// - The schema is versioned: open() applies the migrations this binary knows, in one
//   transaction, and refuses a database whose version is newer than it knows.
// - ingest() is one transaction: a run is in the history whole or not at all (a process killed
//   mid-ingest leaves nothing). Ingesting the same results again (same content key) changes
//   nothing. Two processes may ingest at once: SQLite runs in WAL mode with a busy timeout,
//   PostgreSQL's unique keys settle who inserted.
// - Failures are values: an unreachable server, wrong credentials, an unwritable file are
//   ErrorCategory::environment; a malformed location or a newer schema, input.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "history/history_rows.h"

namespace soci {
class session;
}

namespace gpuoverlap::history {

inline constexpr int kSchemaVersion = 3;

enum class Engine { sqlite, postgresql };

// Where a history is: `--db` or GPUOVERLAP_DB, untrusted. "postgresql://..." or
// "postgres://..." (a libpq URI) is a PostgreSQL database; anything else a SQLite file path.
struct Location {
  Engine engine = Engine::sqlite;
  std::string connect;  // what the engine is opened with
  std::string shown;    // for messages: the path, or the URI without its password
};
Result<Location> parse_location(std::string_view text);

// One machine as the history keeps it, with the number of its runs.
struct MachineEntry {
  std::int64_t id = 0;
  MachineFingerprint fingerprint;
  std::int64_t runs = 0;
};

// One run as `history list` shows it.
struct RunEntry {
  std::int64_t id = 0;
  std::string started_at, tool_revision, command_line, directory, content_key;
  std::int64_t scenarios = 0, metrics = 0, machine_id = 0;
};

// One series: a metric of one scenario's workload on one clock, on one machine.
struct SeriesKey {
  std::int64_t machine_id = 0;
  std::string scenario, series, metric, clock;
  bool operator==(const SeriesKey&) const = default;
};

// One run's value in a series.
struct SeriesPoint {
  std::int64_t run_id = 0;
  std::string started_at;
  double value = 0;
  std::optional<double> low, high;
};

struct Series {
  SeriesKey key;
  std::vector<SeriesPoint> points;  // oldest first (started_at, then the run's id)
};

struct IngestOutcome {
  std::int64_t run_id = 0;
  bool added = false;  // false: the history had this run already (same content key)
  std::size_t metrics = 0;
};

class Store {
 public:
  static Result<Store> open(const Location& location);
  Store(Store&&) noexcept;
  Store& operator=(Store&&) noexcept;
  ~Store();

  Result<IngestOutcome> ingest(const RunRow& run);
  Result<std::vector<RunEntry>> runs();
  Result<std::vector<MachineEntry>> machines();
  // The metrics of one run, in (scenario, series, metric, clock) order.
  Result<std::vector<MetricRow>> metrics(std::int64_t run_id);
  // The id of the machine with this fingerprint's key; nullopt when the history has none.
  Result<std::optional<std::int64_t>> machine_id(const MachineFingerprint& machine);
  // Every series whose metric ends with `metric_suffix` ("" for all), each with its newest
  // `newest` points at most (0: all), ordered by machine, scenario, series, metric, clock.
  // Names match exactly where given (empty: any).
  Result<std::vector<Series>> series(const SeriesKey& match, std::string_view metric_suffix,
                                     std::size_t newest);
  int schema_version() const { return schema_version_; }
  // Called by ingest() with everything of a new run written, just before the commit: tests
  // kill the process there to show that a run is kept whole or not at all.
  void set_before_commit(std::function<void()> hook) { before_commit_ = std::move(hook); }
  const Location& location() const { return location_; }

 private:
  Store(Location location, std::unique_ptr<soci::session> session);
  Status migrate();

  Location location_;
  std::unique_ptr<soci::session> session_;
  int schema_version_ = 0;
  std::function<void()> before_commit_;
};

}  // namespace gpuoverlap::history
