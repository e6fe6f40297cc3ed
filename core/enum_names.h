// One table per enum of the model names its values as they appear in scenario files, CSV
// columns and meta.json; name_of and value_of read the table both ways, so a name and its
// parser can never disagree (one helper instead of a hand-written switch pair per enum).
// names_list gives the "a | b | c" of an error message from the same table.
//
// Contract: each table lists every value of its enum exactly once, with distinct names
// (tests/unit/enum_names_test.cpp checks every table of the model).
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuoverlap {

template <typename Enum>
struct EnumName {
  Enum value;
  std::string_view name;
};

template <typename Enum, std::size_t N>
using EnumNames = std::array<EnumName<Enum>, N>;

// The value's name; the first entry's name for a value missing from the table (a broken
// contract, caught by the tests, never a crash in a release build).
template <typename Enum, std::size_t N>
constexpr std::string_view name_of(const EnumNames<Enum, N>& table, Enum value) {
  for (const EnumName<Enum>& entry : table)
    if (entry.value == value) return entry.name;
  return table.front().name;
}

template <typename Enum, std::size_t N>
constexpr std::optional<Enum> value_of(const EnumNames<Enum, N>& table, std::string_view name) {
  for (const EnumName<Enum>& entry : table)
    if (entry.name == name) return entry.value;
  return std::nullopt;
}

// Every name, in table order (for a command-line check of allowed values).
template <typename Enum, std::size_t N>
std::vector<std::string> all_names(const EnumNames<Enum, N>& table) {
  std::vector<std::string> names;
  for (const EnumName<Enum>& entry : table) names.emplace_back(entry.name);
  return names;
}

// "a | b | c", in table order.
template <typename Enum, std::size_t N>
std::string names_list(const EnumNames<Enum, N>& table) {
  std::string list;
  for (const EnumName<Enum>& entry : table) {
    if (!list.empty()) list += " | ";
    list += entry.name;
  }
  return list;
}

}  // namespace gpuoverlap
