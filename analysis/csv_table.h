// Reads a CSV file with fast-cpp-csv-parser (libfccp) into rows of strings (empty fields stay
// empty: "clock unavailable" is visible). Strict by default: the header must be exactly the
// given columns; with allow_missing, absent columns read as empty and present[] says which
// were there (results of an older version, which lack appended columns).
//
// Results folders are untrusted input: the file is read through read_input_file (a regular
// file, size-limited; inflated when its name ends in .gz), and a number is accepted only whole and
// finite. Every failure throws (io::error::* or std::runtime_error) with the line and column; the
// readers of results (analysis/results.cpp) catch it and return it as an Error naming the file.
#pragma once

// fast-cpp-csv-parser copies file names with strncpy into a fixed buffer, which GCC 12 flags
// when inlined here; the truncation is the library's documented behaviour.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-truncation"
#endif
#include <libfccp/csv.h>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#include <array>
#include <charconv>
#include <cmath>
#include <exception>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/enum_names.h"
#include "core/input_file.h"
#include "timeline/results_format.h"

namespace gpuoverlap {

template <std::size_t N>
struct CsvTable {
  std::array<std::string, N> columns;
  std::array<bool, N> present{};
  std::vector<std::array<std::string, N>> rows;

  std::size_t index(std::string_view column) const {
    for (std::size_t i = 0; i < N; ++i)
      if (columns[i] == column) return i;
    throw std::out_of_range(std::string(column));
  }
  const std::string& at(std::size_t row, std::string_view column) const {
    return rows.at(row)[index(column)];
  }
  // Empty: no value (the clock was not available). Anything else must be a whole finite
  // number; throws std::runtime_error naming the line and column otherwise.
  std::optional<double> number(std::size_t row, std::string_view column) const {
    const std::string& text = at(row, column);
    if (text.empty()) return std::nullopt;
    double value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc{} || end != text.data() + text.size() || !std::isfinite(value))
      throw std::runtime_error(where(row, column) + ": '" + text + "' is not a finite number");
    return value;
  }
  // A count or index: digits only, at most `max`.
  std::uint64_t unsigned_integer(
      std::size_t row, std::string_view column,
      std::uint64_t max = std::numeric_limits<std::uint32_t>::max()) const {
    const std::string& text = at(row, column);
    std::uint64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || error != std::errc{} || end != text.data() + text.size() || value > max)
      throw std::runtime_error(where(row, column) + ": '" + text +
                               "' is not a whole number up to " + std::to_string(max));
    return value;
  }
  // Empty: does not apply; anything else a count as unsigned_integer reads it.
  std::optional<std::uint32_t> optional_unsigned(std::size_t row, std::string_view column) const {
    if (at(row, column).empty()) return std::nullopt;
    return static_cast<std::uint32_t>(unsigned_integer(row, column));
  }
  // One of an enum's names (core/enum_names.h); throws std::runtime_error naming the line,
  // column and the names allowed otherwise.
  template <class Enum, std::size_t M>
  Enum named(std::size_t row, std::string_view column, const EnumNames<Enum, M>& names) const {
    const std::string& text = at(row, column);
    if (const auto value = value_of(names, text)) return *value;
    throw std::runtime_error(where(row, column) + ": '" + text + "' is none of " +
                             names_list(names));
  }
  // Row r is line r + 2 of the file (the header is line 1; a quoted field with a newline
  // shifts this, which only makes a message less exact).
  static std::string where(std::size_t row, std::string_view column) {
    return "line " + std::to_string(row + 2) + ", column " + std::string(column);
  }
};

// A results file's columns against their declaration (timeline/results_format.h): every column
// that every file of format `version` has must be there; the others, absent from an older
// file, read as empty. Throws std::runtime_error naming the first one missing.
template <std::size_t N>
void check_columns(const CsvTable<N>& table, const std::array<ColumnSpec, N>& specs,
                   std::uint32_t version) {
  for (std::size_t i = 0; i < N; ++i)
    if (!table.present[i] && specs[i].since <= version)
      throw std::runtime_error("missing column " + std::string(specs[i].name));
}

// A read_csv failure as one line naming the file once: the errors of reading the file name it
// already, the parser's name a line and column only.
inline std::string csv_failure(const std::string& path, const std::exception& e) {
  const std::string what = e.what();
  return what.starts_with(path) ? what : path + ": " + what;
}

// Throws io::error::* (e.g. a missing or extra column) on a header that does not fit.
template <std::size_t N>
CsvTable<N> read_csv(const std::string& path, const std::array<std::string_view, N>& columns,
                     bool allow_missing = false) {
  auto content = read_input_text(path, kMaxCsvFileBytes);
  if (!content) throw std::runtime_error(content.error().message);
  io::CSVReader<N, io::trim_chars<>, io::double_quote_escape<',', '"'>> reader(
      path, content->data(), content->data() + content->size());
  CsvTable<N> table;
  for (std::size_t i = 0; i < N; ++i) table.columns[i] = std::string(columns[i]);
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    reader.read_header(allow_missing ? io::ignore_missing_column : io::ignore_no_column,
                       table.columns[I]...);
  }
  (std::make_index_sequence<N>{});
  for (std::size_t i = 0; i < N; ++i) table.present[i] = reader.has_column(table.columns[i]);
  std::array<std::string, N> row;
  while ([&]<std::size_t... I>(std::index_sequence<I...>) {
    return reader.read_row(row[I]...);
  }(std::make_index_sequence<N>{}))
    table.rows.push_back(row);
  return table;
}

}  // namespace gpuoverlap
