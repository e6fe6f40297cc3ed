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

// Calls `line_fn` with each line of `text`, newline removed (a last line may lack one).
template <class LineFn>
void for_each_line(std::string_view text, LineFn&& line_fn) {
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    line_fn(text.substr(at, end - at));
    at = end + 1;
  }
}

}  // namespace gpuoverlap::tracefs_text
