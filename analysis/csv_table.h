// Test helper: reads a CSV file with fast-cpp-csv-parser (libfccp), requiring exactly the
// given header, into rows of strings (empty fields stay empty, so "clock unavailable" is
// visible to the assertions).
#pragma once

#include <libfccp/csv.h>

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpuoverlap::test {

template <std::size_t N>
struct CsvTable {
  std::array<std::string, N> columns;
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

// Throws io::error::* (e.g. missing or extra column) on a header that differs from `columns`.
template <std::size_t N>
CsvTable<N> read_csv(const std::string& path, const std::array<std::string_view, N>& columns) {
  io::CSVReader<N, io::trim_chars<>, io::double_quote_escape<',', '"'>> reader(path);
  CsvTable<N> table;
  for (std::size_t i = 0; i < N; ++i) table.columns[i] = std::string(columns[i]);
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    reader.read_header(io::ignore_no_column, table.columns[I]...);
  }
  (std::make_index_sequence<N>{});
  std::array<std::string, N> row;
  while ([&]<std::size_t... I>(std::index_sequence<I...>) {
    return reader.read_row(row[I]...);
  }(std::make_index_sequence<N>{}))
    table.rows.push_back(row);
  return table;
}

}  // namespace gpuoverlap::test
