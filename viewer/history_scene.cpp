#include "viewer/history_scene.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <set>

namespace gpuoverlap::viewer {

Result<HistoryData> read_history(const history::Location& location, std::size_t window) {
  // Opening a SQLite file that is not there would make an empty history: a viewer only reads.
  std::error_code ec;
  if (location.engine == history::Engine::sqlite &&
      !std::filesystem::is_regular_file(location.shown, ec))
    return make_error("no results history at " + location.shown +
                      " (`gpuoverlap history ingest RESULTS_DIR --db FILE` makes one)");
  auto store = history::Store::open(location);
  if (!store) return store.error();
  HistoryData data;
  data.shown = location.shown;
  auto machines = store->machines();
  if (!machines) return machines.error();
  data.machines = std::move(*machines);
  auto runs = store->runs();
  if (!runs) return runs.error();
  data.runs = std::move(*runs);
  auto series = store->series(history::SeriesKey{}, "", window);
  if (!series) return series.error();
  data.series = std::move(*series);
  return data;
}

namespace {

// Days from 1970-01-01 to the proleptic Gregorian y-m-d (Howard Hinnant's days_from_civil).
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

// The inverse: y-m-d of a day count from 1970-01-01.
void civil_from_days(std::int64_t z, std::int64_t& y, unsigned& m, unsigned& d) {
  z += 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  d = doy - (153 * mp + 2) / 5 + 1;
  m = mp < 10 ? mp + 3 : mp - 9;
  y = static_cast<std::int64_t>(yoe) + era * 400 + (m <= 2);
}

std::optional<unsigned> digits(std::string_view text, std::size_t at, std::size_t count) {
  unsigned value = 0;
  const char* first = text.data() + at;
  const auto [end, ec] = std::from_chars(first, first + count, value);
  if (ec != std::errc() || end != first + count) return std::nullopt;
  return value;
}

std::string utc_text(double seconds, bool with_seconds) {
  const auto whole = static_cast<std::int64_t>(std::floor(seconds));
  const std::int64_t days = (whole >= 0 ? whole : whole - 86399) / 86400;
  const std::int64_t in_day = whole - days * 86400;
  std::int64_t y = 0;
  unsigned m = 0, d = 0;
  civil_from_days(days, y, m, d);
  std::string text =
      fmt::format("{:04}-{:02}-{:02} {:02}:{:02}", y, m, d, in_day / 3600, in_day % 3600 / 60);
  if (with_seconds) text += fmt::format(":{:02}", in_day % 60);
  return text;
}

}  // namespace

std::optional<double> utc_seconds(std::string_view t) {
  // Exactly YYYY-MM-DDTHH:MM:SSZ, as run.json writes it.
  if (t.size() != 20 || t[4] != '-' || t[7] != '-' || t[10] != 'T' || t[13] != ':' ||
      t[16] != ':' || t[19] != 'Z')
    return std::nullopt;
  const auto y = digits(t, 0, 4), mo = digits(t, 5, 2), d = digits(t, 8, 2), h = digits(t, 11, 2),
             mi = digits(t, 14, 2), s = digits(t, 17, 2);
  if (!y || !mo || !d || !h || !mi || !s) return std::nullopt;
  if (*mo < 1 || *mo > 12 || *d < 1 || *d > 31 || *h > 23 || *mi > 59 || *s > 60)
    return std::nullopt;
  return static_cast<double>(days_from_civil(*y, *mo, *d) * 86400 + *h * 3600 + *mi * 60 + *s);
}

std::string utc_minutes_text(double seconds) { return utc_text(seconds, false); }

std::string machine_label(const history::MachineEntry& m) {
  return fmt::format("machine {}: {}, {}, {} ({} run{})", m.id, m.fingerprint.gpu,
                     m.fingerprint.driver, m.fingerprint.api, m.runs, m.runs == 1 ? "" : "s");
}

std::string mark_text(const RunMark& mark) {
  return fmt::format("run {}, started {}\n{}", mark.run_id, mark.started_at, mark.directory);
}

RunsScene runs_scene(const HistoryData& data) {
  RunsScene scene;
  for (const history::MachineEntry& m : data.machines)
    scene.rows.push_back({m.id, machine_label(m), {}});
  double first = std::numeric_limits<double>::infinity(), last = -first;
  for (const history::RunEntry& r : data.runs) {
    auto row = std::find_if(scene.rows.begin(), scene.rows.end(),
                            [&](const MachineRow& m) { return m.machine_id == r.machine_id; });
    if (row == scene.rows.end()) {  // a run whose machine the list lacks: a row of its own
      scene.rows.push_back({r.machine_id, fmt::format("machine {}", r.machine_id), {}});
      row = scene.rows.end() - 1;
    }
    RunMark mark{r.id, r.started_at, utc_seconds(r.started_at), r.directory};
    if (mark.time_s) {
      first = std::min(first, *mark.time_s);
      last = std::max(last, *mark.time_s);
    } else {
      ++scene.undated;
    }
    row->marks.push_back(std::move(mark));
  }
  if (first > last) return scene;  // nothing dated: the default axis, nothing placed on it
  // A lone instant gets an hour each side; a range, 3 % of itself each side, so that the
  // first and last marks are not cut by the plot's edges.
  const double margin_s = last > first ? 0.03 * (last - first) : 3600.0;
  scene.begin_s = first - margin_s;
  scene.end_s = last + margin_s;
  return scene;
}

RunsLayout runs_layout(const RunsScene& scene, layout::Rect area, double label_px, double row_px) {
  RunsLayout out;
  out.plot = {area.x0 + label_px, area.y0, area.x1,
              area.y0 + row_px * static_cast<double>(scene.rows.size())};
  const double span_s = scene.end_s - scene.begin_s;
  auto x_of = [&](double t) {
    return out.plot.x0 + (t - scene.begin_s) / span_s * (out.plot.x1 - out.plot.x0);
  };
  for (std::size_t r = 0; r < scene.rows.size(); ++r) {
    const double y0 = area.y0 + row_px * static_cast<double>(r);
    out.rows.push_back({area.x0, y0, area.x1, y0 + row_px});
    for (std::size_t m = 0; m < scene.rows[r].marks.size(); ++m)
      if (const auto& t = scene.rows[r].marks[m].time_s)
        out.marks.push_back({r, m, x_of(*t), y0 + row_px / 2});
  }
  const bool with_seconds = span_s < 600;
  constexpr int kTicks = 5;
  for (int i = 0; i < kTicks; ++i) {
    const double t = scene.begin_s + span_s * i / (kTicks - 1);
    out.ticks.push_back({x_of(t), utc_text(t, with_seconds)});
  }
  return out;
}

std::optional<MarkPlace> mark_at(const RunsLayout& layout, double x, double y, double radius_px) {
  std::optional<MarkPlace> nearest;
  double best = radius_px * radius_px;
  for (const MarkPlace& m : layout.marks) {
    const double d2 = (m.x - x) * (m.x - x) + (m.y - y) * (m.y - y);
    if (d2 <= best) {
      best = d2;
      nearest = m;
    }
  }
  return nearest;
}

RunOpening open_run(const RunMark& mark, bool folder_present) {
  if (folder_present) return {std::filesystem::path(mark.directory), {}};
  return {std::nullopt, "folder no longer present: " + mark.directory};
}

namespace {

// The distinct values of `field` among the series that `keep` accepts, in the store's order.
template <class T, class Field, class Keep>
std::vector<T> distinct(const std::vector<history::Series>& all, Field field, Keep keep) {
  std::vector<T> out;
  for (const history::Series& s : all)
    if (keep(s.key) && std::find(out.begin(), out.end(), field(s.key)) == out.end())
      out.push_back(field(s.key));
  return out;
}

template <class T>
void settle(T& choice, const std::vector<T>& options) {
  if (!options.empty() && std::find(options.begin(), options.end(), choice) == options.end())
    choice = options.front();
}

}  // namespace

SeriesMenus series_menus(const std::vector<history::Series>& all, history::SeriesKey& c) {
  using K = history::SeriesKey;
  SeriesMenus menus;
  menus.machines = distinct<std::int64_t>(
      all, [](const K& k) { return k.machine_id; }, [](const K&) { return true; });
  settle(c.machine_id, menus.machines);
  menus.scenarios = distinct<std::string>(
      all, [](const K& k) { return k.scenario; },
      [&](const K& k) { return k.machine_id == c.machine_id; });
  settle(c.scenario, menus.scenarios);
  menus.series = distinct<std::string>(
      all, [](const K& k) { return k.series; },
      [&](const K& k) { return k.machine_id == c.machine_id && k.scenario == c.scenario; });
  settle(c.series, menus.series);
  menus.metrics = distinct<std::string>(
      all, [](const K& k) { return k.metric; },
      [&](const K& k) {
        return k.machine_id == c.machine_id && k.scenario == c.scenario && k.series == c.series;
      });
  settle(c.metric, menus.metrics);
  menus.clocks = distinct<std::string>(
      all, [](const K& k) { return k.clock; },
      [&](const K& k) {
        return k.machine_id == c.machine_id && k.scenario == c.scenario && k.series == c.series &&
               k.metric == c.metric;
      });
  settle(c.clock, menus.clocks);
  return menus;
}

history::SeriesKey default_choice(const std::vector<history::Series>& all) {
  for (const history::Series& s : all)
    if (s.key.metric.ends_with("_p50_us")) return s.key;
  return all.empty() ? history::SeriesKey{} : all.front().key;
}

const history::Series* find_series(const std::vector<history::Series>& all,
                                   const history::SeriesKey& key) {
  for (const history::Series& s : all)
    if (s.key == key) return &s;
  return nullptr;
}

std::string step_text(const history::ChangePoint& c) {
  return fmt::format("{:+.1f} % [{:+.1f}, {:+.1f}]", 100 * c.step, 100 * c.step_low,
                     100 * c.step_high);
}

TrendScene trend_scene(const history::Series& series,
                       const history::ChangePointSettings& settings) {
  TrendScene scene;
  scene.key = series.key;
  const history::SeriesKey& k = series.key;
  scene.title = fmt::format("{} · {} · {} · {} · machine {}", k.scenario, k.series, k.metric,
                            k.clock, k.machine_id);
  scene.points = series.points;
  std::vector<double> values;
  double low = std::numeric_limits<double>::infinity(), high = -low;
  for (const history::SeriesPoint& p : series.points) {
    values.push_back(p.value);
    low = std::min({low, p.value, p.low.value_or(p.value)});
    high = std::max({high, p.value, p.high.value_or(p.value)});
    scene.band |= p.low.has_value() && p.high.has_value();
  }
  scene.changes = history::change_points(values, settings);
  if (low > high) return scene;  // no point: the default range
  // 5 % of the range each side; a flat series gets 5 % of its level (or 1) each side.
  const double margin = high > low ? 0.05 * (high - low) : std::max(0.05 * std::abs(high), 1.0);
  scene.low = low - margin;
  scene.high = high + margin;
  return scene;
}

TrendLayout trend_layout(const TrendScene& scene, layout::Rect plot) {
  TrendLayout out;
  out.plot = plot;
  const std::size_t n = scene.points.size();
  auto x_of = [&](double index) {
    return plot.x0 +
           (index + 0.5) / static_cast<double>(std::max<std::size_t>(n, 1)) * (plot.x1 - plot.x0);
  };
  auto y_of = [&](double value) {
    return plot.y1 - (value - scene.low) / (scene.high - scene.low) * (plot.y1 - plot.y0);
  };
  for (std::size_t i = 0; i < n; ++i) {
    const history::SeriesPoint& p = scene.points[i];
    TrendPointPlace place{x_of(static_cast<double>(i)), y_of(p.value), {}, {}};
    if (p.low) place.y_low = y_of(*p.low);
    if (p.high) place.y_high = y_of(*p.high);
    out.points.push_back(place);
  }
  // Each level runs from the previous change point (or the first run) to the next; its median
  // is the `before` of the change ending it, the last one's the last change's `after`.
  std::size_t level_begin = 0;
  for (const history::ChangePoint& c : scene.changes) {
    const double x = x_of(static_cast<double>(c.index) - 0.5);
    out.changes.push_back({c.index, x, step_text(c)});
    out.levels.push_back({x_of(static_cast<double>(level_begin) - 0.5), x, y_of(c.before)});
    level_begin = c.index;
  }
  if (!scene.changes.empty())
    out.levels.push_back({x_of(static_cast<double>(level_begin) - 0.5),
                          x_of(static_cast<double>(n) - 0.5), y_of(scene.changes.back().after)});
  constexpr int kTicks = 5;
  for (int i = 0; i < kTicks; ++i) {
    const double v = scene.low + (scene.high - scene.low) * i / (kTicks - 1);
    out.y_ticks.push_back({y_of(v), fmt::format("{:.4g}", v)});
  }
  return out;
}

}  // namespace gpuoverlap::viewer
