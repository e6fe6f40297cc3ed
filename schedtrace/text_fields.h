// Small readers of tracefs's text files (the record's text, event formats, saved_tgids), shared
// by the parsers of this folder.
#pragma once

#include <charconv>
#include <optional>
#include <string_view>
#include <system_error>

namespace gpuoverlap::tracefs_text {

inline std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

// The whole of `s` as a number, or none.
template <class T>
std::optional<T> number(std::string_view s, int base = 10) {
  T value{};
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value, base);
  if (ec != std::errc{} || end != s.data() + s.size()) return std::nullopt;
  return value;
}

}  // namespace gpuoverlap::tracefs_text
