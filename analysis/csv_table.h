// Reads a CSV file with fast-cpp-csv-parser (libfccp) into rows of strings (empty fields stay
// empty: "clock unavailable" is visible). Strict by default: the header must be exactly the
// given columns; with allow_missing, absent columns read as empty and present[] says which
// were there (results of an older version, which lack appended columns).
#pragma once

// fast-cpp-csv-parser copies file names with strncpy into a fixed buffer, which GCC 12 flags
// when inlined here; the truncation is the library's documented behaviour.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-truncation"
#include <libfccp/csv.h>
#pragma GCC diagnostic pop

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

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
  std::optional<double> number(std::size_t row, std::string_view column) const {
    const std::string& text = at(row, column);
    if (text.empty()) return std::nullopt;
    return std::stod(text);
  }
};

// Throws io::error::* (e.g. a missing or extra column) on a header that does not fit.
template <std::size_t N>
CsvTable<N> read_csv(const std::string& path, const std::array<std::string_view, N>& columns,
                     bool allow_missing = false) {
  io::CSVReader<N, io::trim_chars<>, io::double_quote_escape<',', '"'>> reader(path);
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
