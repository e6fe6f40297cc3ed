#include "history/history_store.h"

#include <fmt/format.h>
#include <soci/postgresql/soci-postgresql.h>
#include <soci/soci.h>
#include <soci/sqlite3/soci-sqlite3.h>

#include <chrono>
#include <ctime>

#include "core/redact.h"

namespace gpuoverlap::history {

namespace {

// SQLite waits this long for another writer's lock before giving up (seconds).
constexpr int kBusyTimeoutS = 30;

// A SOCI failure as an Error: `what` says which step. A failure to reach or open the database
// is the environment's; one the database reports about a statement is ours (environment too:
// the input was validated before it got here, so what remains is the database's state).
Error database_error(const Location& at, std::string_view what, const std::exception& e) {
  std::string message = e.what();
  // SOCI appends the statement and every bound value: the cause is before it, and the values
  // are the user's data, not the failure.
  if (const std::size_t statement = message.find(" while executing \"");
      statement != std::string::npos)
    message.erase(statement);
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  // libpq's reasons come on lines of their own ("Cannot establish connection to the
  // database.\nconnection to server ... failed: FATAL:  role ... does not exist"): one line.
  std::string line;
  for (const char c : message) {
    const char space = c == '\n' || c == '\t' ? ' ' : c;
    if (space == ' ' && !line.empty() && line.back() == ' ') continue;
    line += space;
  }
  return make_error(fmt::format("history {}: {}: {}", at.shown, what, line),
                    ErrorCategory::environment);
}

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

// The schema's first version. The id column is the one thing the engines spell apart.
std::vector<std::string> migration_1(Engine engine) {
  const std::string id =
      engine == Engine::postgresql ? "id BIGSERIAL PRIMARY KEY" : "id INTEGER PRIMARY KEY";
  return {
      "CREATE TABLE IF NOT EXISTS machines (" + id +
          ", fingerprint TEXT NOT NULL UNIQUE, gpu TEXT NOT NULL, vendor_id BIGINT, "
          "device_id BIGINT, driver TEXT NOT NULL, api TEXT NOT NULL, os TEXT NOT NULL, "
          "cpu TEXT NOT NULL, cpu_cores BIGINT)",
      "CREATE TABLE IF NOT EXISTS runs (" + id +
          ", content_key TEXT NOT NULL UNIQUE, machine_id BIGINT NOT NULL REFERENCES "
          "machines(id), started_at TEXT NOT NULL, tool_revision TEXT NOT NULL, command_line "
          "TEXT NOT NULL, directory TEXT NOT NULL, scenarios BIGINT NOT NULL, ingested_at TEXT "
          "NOT NULL)",
      "CREATE TABLE IF NOT EXISTS metrics (run_id BIGINT NOT NULL REFERENCES runs(id) ON "
      "DELETE CASCADE, scenario TEXT NOT NULL, series TEXT NOT NULL, metric TEXT NOT NULL, "
      "clock TEXT NOT NULL, value DOUBLE PRECISION NOT NULL, low DOUBLE PRECISION, high DOUBLE "
      "PRECISION, frames BIGINT NOT NULL, PRIMARY KEY (run_id, scenario, series, metric, "
      "clock))",
      "CREATE INDEX IF NOT EXISTS metrics_by_series ON metrics (scenario, series, metric, clock)",
      "CREATE INDEX IF NOT EXISTS runs_by_machine ON runs (machine_id, started_at)"};
}

// Version 2: a series' newest runs found through an index. A metric row carries its run's
// machine and start (copied from runs, which they never change), so that one index in series
// order, newest last, holds everything `series()` seeks by; v1 rows get them from their runs.
std::vector<std::string> migration_2() {
  return {"ALTER TABLE metrics ADD COLUMN machine_id BIGINT",
          "ALTER TABLE metrics ADD COLUMN started_at TEXT",
          "UPDATE metrics SET machine_id = (SELECT r.machine_id FROM runs r WHERE r.id = "
          "metrics.run_id), started_at = (SELECT r.started_at FROM runs r WHERE r.id = "
          "metrics.run_id)",
          "CREATE INDEX IF NOT EXISTS metrics_by_series_newest ON metrics (machine_id, scenario, "
          "series, metric, clock, started_at, run_id)",
          // Superseded by the one above; kept, it lured PostgreSQL into a merge join over the
          // whole table instead of one range per series.
          "DROP INDEX IF EXISTS metrics_by_series"};
}

// Version 3: the physical device of a machine (its Vulkan device UUID), so that two GPUs of one
// host, or one model on two hosts, are machines of their own. Older rows and results read "?".
std::vector<std::string> migration_3() {
  return {"ALTER TABLE machines ADD COLUMN device_uuid TEXT NOT NULL DEFAULT '?'"};
}

soci::indicator present(bool has) { return has ? soci::i_ok : soci::i_null; }

// A number column as the engines hand it back: SQLite types an expression (COUNT) by its
// value and a BIGINT column by its declared name, PostgreSQL by the server's type, and SOCI's
// row refuses a get<> of another type.
double number_at(const soci::row& row, std::size_t i) {
  switch (row.get_properties(i).get_data_type()) {
    case soci::dt_integer:
      return row.get<int>(i);
    case soci::dt_long_long:
      return static_cast<double>(row.get<long long>(i));
    case soci::dt_unsigned_long_long:
      return static_cast<double>(row.get<unsigned long long>(i));
    case soci::dt_double:
      return row.get<double>(i);
    case soci::dt_string:
      return std::stod(row.get<std::string>(i));
    default:
      throw soci::soci_error("column " + row.get_properties(i).get_name() + " is not a number");
  }
}
long long integer_at(const soci::row& row, std::size_t i) {
  return static_cast<long long>(number_at(row, i));
}
std::optional<std::int64_t> optional_integer_at(const soci::row& row, std::size_t i) {
  if (row.get_indicator(i) == soci::i_null) return std::nullopt;
  return integer_at(row, i);
}

}  // namespace

Result<Location> parse_location(std::string_view text) {
  Location out;
  if (text.empty())
    return make_error(
        "no results history named: give --db FILE (a SQLite file) or --db postgresql://... "
        "(a PostgreSQL database), or set GPUOVERLAP_DB");
  for (char c : text)
    if (c == '\0' || c == '\n' || c == '\r')
      return make_error("--db: a history location has no line breaks or NUL bytes");
  const bool uri = text.starts_with("postgresql://") || text.starts_with("postgres://");
  if (uri) {
    const std::string_view rest = text.substr(text.find("://") + 3);
    if (rest.empty() || rest == "/")
      return make_error(
          fmt::format("--db {}: names no server or database (e.g. "
                      "postgresql://user@host/dbname)",
                      text));
    out.engine = Engine::postgresql;
    out.connect = std::string(text);
    out.shown = without_password(out.connect);
    return out;
  }
  if (text.find("://") != std::string_view::npos)
    return make_error(fmt::format(
        "--db {}: not a history location (a SQLite file path, or postgresql://...)", text));
  out.engine = Engine::sqlite;
  out.shown = std::string(text);
  // SOCI's sqlite3 back end reads "db=\"...\" timeout=..." and has no escape for a quote, and
  // trims spaces: such a path would open another file.
  if (text.find('"') != std::string_view::npos || text.front() == ' ' || text.back() == ' ')
    return make_error(fmt::format(
        "--db '{}': a history file's path may not hold a double quote or begin or end with a "
        "space",
        text));
  out.connect = fmt::format("db=\"{}\" timeout={}", text, kBusyTimeoutS);
  return out;
}

Store::Store(Location location, std::unique_ptr<soci::session> session)
    : location_(std::move(location)), session_(std::move(session)) {}
Store::Store(Store&&) noexcept = default;
Store& Store::operator=(Store&&) noexcept = default;
Store::~Store() = default;

Result<Store> Store::open(const Location& location) {
  std::unique_ptr<soci::session> session;
  try {
    session = location.engine == Engine::postgresql
                  ? std::make_unique<soci::session>(soci::postgresql, location.connect)
                  : std::make_unique<soci::session>(soci::sqlite3, location.connect);
    if (location.engine == Engine::sqlite) {
      // WAL: readers never block the writer, and two ingests queue on the busy timeout.
      std::string mode;
      *session << "PRAGMA journal_mode=WAL", soci::into(mode);
      *session << "PRAGMA foreign_keys=ON";
    } else {
      // "relation already exists, skipping" and the like are not the user's business.
      *session << "SET client_min_messages TO WARNING";
    }
  } catch (const std::exception& e) {
    return database_error(location, "could not open it", e);
  }
  Store store(location, std::move(session));
  GPUOVERLAP_TRY(store.migrate());
  return store;
}

Status Store::migrate() {
  soci::session& sql = *session_;
  try {
    // Two processes opening a new history at once: one migrates, the other waits and finds it
    // done. SQLite: a write lock from the start (BEGIN IMMEDIATE; the busy timeout waits).
    // PostgreSQL: concurrent CREATE TABLE IF NOT EXISTS is not safe, so a transaction-scoped
    // advisory lock (its key: "gpuoverlap" in ASCII) comes first.
    if (location_.engine == Engine::sqlite)
      sql << "BEGIN IMMEDIATE";
    else
      sql << "BEGIN";
    struct RollBackUnlessCommitted {
      soci::session& sql;
      bool committed = false;
      ~RollBackUnlessCommitted() {
        if (committed) return;
        try {
          sql << "ROLLBACK";
        } catch (...) {
        }
      }
    } guard{sql};
    if (location_.engine == Engine::postgresql)
      sql << "SELECT pg_advisory_xact_lock(7453010354462467952)";
    sql << "CREATE TABLE IF NOT EXISTS schema_version (version BIGINT NOT NULL)";
    long long version = 0;
    soci::indicator known = soci::i_null;
    sql << "SELECT MAX(version) FROM schema_version", soci::into(version, known);
    if (known != soci::i_ok) version = 0;
    if (version > kSchemaVersion)
      return make_error(fmt::format(
          "history {}: its schema is version {}, newer than this gpuoverlap knows ({}): use "
          "a newer gpuoverlap",
          location_.shown, version, kSchemaVersion));
    if (version < 1) {
      for (const std::string& statement : migration_1(location_.engine)) sql << statement;
      sql << "INSERT INTO schema_version (version) VALUES (1)";
    }
    if (version < 2) {
      for (const std::string& statement : migration_2()) sql << statement;
      sql << "INSERT INTO schema_version (version) VALUES (2)";
    }
    if (version < 3) {
      for (const std::string& statement : migration_3()) sql << statement;
      sql << "INSERT INTO schema_version (version) VALUES (3)";
    }
    sql << "COMMIT";
    guard.committed = true;
    schema_version_ = kSchemaVersion;
  } catch (const std::exception& e) {
    return database_error(location_, "could not set up its tables", e);
  }
  return ok_status();
}

Result<IngestOutcome> Store::ingest(const RunRow& run) {
  soci::session& sql = *session_;
  IngestOutcome out;
  try {
    soci::transaction transaction(sql);
    // Writes first: SQLite takes its write lock at the first write, so a reader that upgrades
    // later cannot deadlock with another ingest.
    const MachineFingerprint& m = run.machine;
    const std::string key = m.key();
    const long long vendor = m.vendor_id.value_or(0), device = m.device_id.value_or(0),
                    cores = m.cpu_cores.value_or(0);
    soci::indicator vendor_ok = present(m.vendor_id.has_value()),
                    device_ok = present(m.device_id.has_value()),
                    cores_ok = present(m.cpu_cores.has_value());
    sql << "INSERT INTO machines (fingerprint, gpu, vendor_id, device_id, driver, api, os, cpu, "
           "cpu_cores, device_uuid) VALUES (:fingerprint, :gpu, :vendor, :device, :driver, :api, "
           ":os, :cpu, :cores, :uuid) ON CONFLICT (fingerprint) DO NOTHING",
        soci::use(key), soci::use(m.gpu), soci::use(vendor, vendor_ok),
        soci::use(device, device_ok), soci::use(m.driver), soci::use(m.api), soci::use(m.os),
        soci::use(m.cpu), soci::use(cores, cores_ok), soci::use(m.device_uuid);
    long long machine_id = 0;
    sql << "SELECT id FROM machines WHERE fingerprint = :fingerprint", soci::use(key),
        soci::into(machine_id);
    if (!sql.got_data()) throw soci::soci_error("the machine row just written is not there");
    const std::string ingested_at = utc_now();
    const long long scenarios = run.scenarios;
    soci::statement insert_run =
        (sql.prepare << "INSERT INTO runs (content_key, machine_id, started_at, tool_revision, "
                        "command_line, directory, scenarios, ingested_at) VALUES (:key, "
                        ":machine, :started, :revision, :command, :directory, :scenarios, "
                        ":ingested) ON CONFLICT (content_key) DO NOTHING",
         soci::use(run.content_key), soci::use(machine_id), soci::use(run.started_at),
         soci::use(run.tool_revision), soci::use(run.command_line), soci::use(run.directory),
         soci::use(scenarios), soci::use(ingested_at));
    insert_run.execute(true);
    out.added = insert_run.get_affected_rows() > 0;
    long long run_id = 0;
    sql << "SELECT id FROM runs WHERE content_key = :key", soci::use(run.content_key),
        soci::into(run_id);
    out.run_id = run_id;
    if (!out.added) {
      transaction.rollback();  // the machine row too, if it was new: nothing changes
      return out;
    }
    if (!run.metrics.empty()) {
      const std::size_t n = run.metrics.size();
      std::vector<long long> run_ids(n, run_id), machine_ids(n, machine_id), frames(n);
      std::vector<std::string> started_at(n, run.started_at);
      std::vector<std::string> scenario(n), series(n), metric(n), clock(n);
      std::vector<double> value(n), low(n), high(n);
      std::vector<soci::indicator> low_ok(n), high_ok(n);
      for (std::size_t i = 0; i < n; ++i) {
        const MetricRow& r = run.metrics[i];
        scenario[i] = r.scenario, series[i] = r.series, metric[i] = r.metric, clock[i] = r.clock;
        value[i] = r.value, frames[i] = r.frames;
        low[i] = r.low.value_or(0), low_ok[i] = present(r.low.has_value());
        high[i] = r.high.value_or(0), high_ok[i] = present(r.high.has_value());
      }
      sql << "INSERT INTO metrics (run_id, scenario, series, metric, clock, value, low, high, "
             "frames, machine_id, started_at) VALUES (:run, :scenario, :series, :metric, :clock, "
             ":value, :low, :high, :frames, :machine, :started)",
          soci::use(run_ids), soci::use(scenario), soci::use(series), soci::use(metric),
          soci::use(clock), soci::use(value), soci::use(low, low_ok), soci::use(high, high_ok),
          soci::use(frames), soci::use(machine_ids), soci::use(started_at);
      out.metrics = n;
    }
    if (before_commit_) before_commit_();
    transaction.commit();
  } catch (const std::exception& e) {
    return database_error(location_, "could not keep the run", e);
  }
  return out;
}

Result<std::vector<RunEntry>> Store::runs() {
  std::vector<RunEntry> out;
  try {
    soci::rowset<soci::row> rows =
        (session_->prepare << "SELECT r.id, r.started_at, r.tool_revision, r.command_line, "
                              "r.directory, r.content_key, r.scenarios, r.machine_id, "
                              "(SELECT COUNT(*) FROM metrics x WHERE x.run_id = r.id) "
                              "FROM runs r ORDER BY r.started_at, r.id");
    for (const soci::row& row : rows) {
      RunEntry e;
      e.id = integer_at(row, 0);
      e.started_at = row.get<std::string>(1);
      e.tool_revision = row.get<std::string>(2);
      e.command_line = row.get<std::string>(3);
      e.directory = row.get<std::string>(4);
      e.content_key = row.get<std::string>(5);
      e.scenarios = integer_at(row, 6);
      e.machine_id = integer_at(row, 7);
      e.metrics = integer_at(row, 8);
      out.push_back(std::move(e));
    }
  } catch (const std::exception& e) {
    return database_error(location_, "could not list its runs", e);
  }
  return out;
}

Result<std::vector<MachineEntry>> Store::machines() {
  std::vector<MachineEntry> out;
  try {
    soci::rowset<soci::row> rows =
        (session_->prepare << "SELECT m.id, m.gpu, m.vendor_id, m.device_id, m.driver, m.api, "
                              "m.os, m.cpu, m.cpu_cores, (SELECT COUNT(*) FROM runs r WHERE "
                              "r.machine_id = m.id), m.device_uuid FROM machines m ORDER BY m.id");
    for (const soci::row& row : rows) {
      MachineEntry e;
      e.id = integer_at(row, 0);
      e.fingerprint.gpu = row.get<std::string>(1);
      e.fingerprint.vendor_id = optional_integer_at(row, 2);
      e.fingerprint.device_id = optional_integer_at(row, 3);
      e.fingerprint.driver = row.get<std::string>(4);
      e.fingerprint.api = row.get<std::string>(5);
      e.fingerprint.os = row.get<std::string>(6);
      e.fingerprint.cpu = row.get<std::string>(7);
      e.fingerprint.cpu_cores = optional_integer_at(row, 8);
      e.runs = integer_at(row, 9);
      e.fingerprint.device_uuid = row.get<std::string>(10);
      out.push_back(std::move(e));
    }
  } catch (const std::exception& e) {
    return database_error(location_, "could not list its machines", e);
  }
  return out;
}

Result<std::optional<std::int64_t>> Store::machine_id(const MachineFingerprint& machine) {
  try {
    const std::string key = machine.key();
    long long id = 0;
    soci::indicator found = soci::i_null;
    *session_ << "SELECT id FROM machines WHERE fingerprint = :fingerprint", soci::use(key),
        soci::into(id, found);
    if (!session_->got_data() || found != soci::i_ok) return std::optional<std::int64_t>();
    return std::optional<std::int64_t>(id);
  } catch (const std::exception& e) {
    return database_error(location_, "could not look up a machine", e);
  }
}

Result<std::vector<Series>> Store::series(const SeriesKey& match, std::string_view metric_suffix,
                                          std::size_t newest) {
  std::vector<Series> out;
  try {
    // One query: the series that match (a walk of metrics_by_series_newest), for each the
    // start of its newest-th newest run (a seek in that index; '' for all of them), then its
    // rows from there on (a range of that index: no OR in the join, which PostgreSQL would
    // answer with a merge join over the whole table). MATERIALIZED (SQLite 3.35, PostgreSQL
    // 12) keeps the seek once per series, not once per row. Reading only those keeps a long
    // history's cost that of its newest runs. Every filter a bound parameter; an empty one matches
    // everything. The suffix is compared literally (LIKE makes '_' a wildcard, and SQLite's ignores
    // case where PostgreSQL's does not); substr() of a start before the text's is never equal to a
    // longer suffix.
    const long long machine = match.machine_id;
    const long long all = newest == 0 ? 1 : 0;
    const long long skip = newest == 0 ? 0 : static_cast<long long>(newest) - 1;
    const std::string suffix(metric_suffix);
    soci::rowset<soci::row> rows =
        (session_->prepare
             << "WITH matching AS (SELECT machine_id, scenario, series, metric, clock FROM "
                "metrics WHERE (CAST(:machine AS BIGINT) = 0 OR machine_id = :machine2) AND "
                "(:scenario = '' OR scenario = :scenario2) AND (:series = '' OR series = "
                ":series2) AND (:metric = '' OR metric = :metric2) AND (:clock = '' OR clock = "
                ":clock2) AND substr(metric, length(metric) - length(CAST(:suffix AS TEXT)) + 1) "
                "= :suffix2 GROUP BY machine_id, scenario, series, metric, clock), "
                "newest AS MATERIALIZED (SELECT k.machine_id, k.scenario, k.series, k.metric, "
                "k.clock, "
                "CASE WHEN CAST(:all AS BIGINT) = 1 THEN '' ELSE COALESCE((SELECT "
                "y.started_at FROM metrics y WHERE y.machine_id = k.machine_id AND y.scenario = "
                "k.scenario AND y.series = k.series AND y.metric = k.metric AND y.clock = "
                "k.clock ORDER BY y.started_at DESC, y.run_id DESC LIMIT 1 OFFSET CAST(:skip AS "
                "BIGINT)), '') END AS since FROM matching k) "
                "SELECT x.machine_id, x.scenario, x.series, x.metric, x.clock, x.run_id, "
                "x.started_at, x.value, x.low, x.high FROM newest k JOIN metrics x ON "
                "x.machine_id = k.machine_id AND x.scenario = k.scenario AND x.series = "
                "k.series AND x.metric = k.metric AND x.clock = k.clock AND x.started_at >= "
                "k.since "
                "ORDER BY x.machine_id, x.scenario, x.series, x.metric, x.clock, x.started_at, "
                "x.run_id",
         soci::use(machine, "machine"), soci::use(machine, "machine2"),
         soci::use(match.scenario, "scenario"), soci::use(match.scenario, "scenario2"),
         soci::use(match.series, "series"), soci::use(match.series, "series2"),
         soci::use(match.metric, "metric"), soci::use(match.metric, "metric2"),
         soci::use(match.clock, "clock"), soci::use(match.clock, "clock2"),
         soci::use(suffix, "suffix"), soci::use(suffix, "suffix2"), soci::use(skip, "skip"),
         soci::use(all, "all"));
    for (const soci::row& row : rows) {
      SeriesKey key{integer_at(row, 0), row.get<std::string>(1), row.get<std::string>(2),
                    row.get<std::string>(3), row.get<std::string>(4)};
      if (out.empty() || !(out.back().key == key)) out.push_back({std::move(key), {}});
      SeriesPoint point;
      point.run_id = integer_at(row, 5);
      point.started_at = row.get<std::string>(6);
      point.value = number_at(row, 7);
      if (row.get_indicator(8) != soci::i_null) point.low = number_at(row, 8);
      if (row.get_indicator(9) != soci::i_null) point.high = number_at(row, 9);
      out.back().points.push_back(std::move(point));
    }
  } catch (const std::exception& e) {
    return database_error(location_, "could not read its series", e);
  }
  // Runs that started in the same second as the newest-th newest come along: the run id
  // settles which of them are in.
  if (newest > 0)
    for (Series& s : out)
      if (s.points.size() > newest)
        s.points.erase(s.points.begin(), s.points.end() - static_cast<std::ptrdiff_t>(newest));
  return out;
}

Result<std::vector<MetricRow>> Store::metrics(std::int64_t run_id) {
  std::vector<MetricRow> out;
  try {
    const long long id = run_id;
    soci::rowset<soci::row> rows =
        (session_->prepare << "SELECT scenario, series, metric, clock, value, low, high, frames "
                              "FROM metrics WHERE run_id = :run ORDER BY scenario, series, "
                              "metric, clock",
         soci::use(id));
    for (const soci::row& row : rows) {
      MetricRow r;
      r.scenario = row.get<std::string>(0);
      r.series = row.get<std::string>(1);
      r.metric = row.get<std::string>(2);
      r.clock = row.get<std::string>(3);
      r.value = number_at(row, 4);
      if (row.get_indicator(5) != soci::i_null) r.low = number_at(row, 5);
      if (row.get_indicator(6) != soci::i_null) r.high = number_at(row, 6);
      r.frames = integer_at(row, 7);
      out.push_back(std::move(r));
    }
  } catch (const std::exception& e) {
    return database_error(location_, "could not read a run's metrics", e);
  }
  return out;
}

}  // namespace gpuoverlap::history
