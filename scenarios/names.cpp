#include "scenarios/names.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>

namespace gpuoverlap {

namespace {

bool is_control(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u < 0x20 || u == 0x7f;
}

}  // namespace

std::string directory_name_problem(std::string_view name) {
  if (name.empty()) return "is empty";
  if (name.size() > kMaxNameBytes)
    return fmt::format("is {} characters long, at most {} are allowed", name.size(), kMaxNameBytes);
  if (name.find_first_not_of("abcdefghijklmnopqrstuvwxyz"
                             "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != std::string_view::npos)
    return "must be letters, digits, '.', '_' or '-' (it names the output directory)";
  if (name.front() == '.') return "must not start with '.' (it names the output directory)";
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (std::string_view reserved :
       std::array<std::string_view, 4>{"plots", "run.json", "report.md", "report-details.md"})
    if (lower == reserved)
      return "is reserved: the results folder uses '" + std::string(reserved) + "' itself";
  return {};
}

std::string label_problem(std::string_view name) {
  if (name.empty()) return "is empty";
  if (name.size() > kMaxNameBytes)
    return fmt::format("is {} bytes long, at most {} are allowed", name.size(), kMaxNameBytes);
  if (std::any_of(name.begin(), name.end(), is_control))
    return "contains a control character (newline, tab, NUL, ...)";
  if (name.find(';') != std::string_view::npos)
    return "contains ';', which separates the names of a dependency list";
  if (name.front() == ' ' || name.back() == ' ') return "starts or ends with a space";
  return {};
}

std::string escape_control_characters(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (is_control(c))
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    else
      out += c;
  }
  return out;
}

std::string printable_name(std::string_view text) {
  if (text.size() <= kMaxNameBytes) return escape_control_characters(text);
  return escape_control_characters(text.substr(0, kMaxNameBytes)) + "...";
}

}  // namespace gpuoverlap
