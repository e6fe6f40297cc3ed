#include "scenarios/scenario_fields.h"

#include <fmt/format.h>

#include "scenarios/names.h"

namespace gpuoverlap::scenario_grammar {

Error FieldReader::error_at(const toml::node* node, const std::string& reason) const {
  if (node && node->source().begin.line > 0)
    return make_error(escape_control_characters(
        source_ + ":" + std::to_string(node->source().begin.line) + ": " + reason));
  return make_error(escape_control_characters(source_ + ": " + reason));
}

Status FieldReader::only_keys(const toml::table& table,
                              std::initializer_list<std::string_view> allowed,
                              const std::string& where) const {
  for (const auto& [key, value] : table) {
    bool known = false;
    for (auto a : allowed) known = known || key.str() == a;
    if (!known) {
      std::string list;
      for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      return error_at(&value, "unknown key '" + std::string(key.str()) + "' in " + where +
                                  " (allowed: " + list + ")");
    }
  }
  return ok_status();
}

Result<std::string> FieldReader::string_field(const toml::table& table, std::string_view key,
                                              const std::string& where, bool required,
                                              const toml::node* owner) const {
  const toml::node* node = table.get(key);
  if (!node) {
    if (required) return error_at(owner, where + " needs '" + std::string(key) + "'");
    return std::string{};
  }
  if (!node->is_string())
    return error_at(node, "'" + std::string(key) + "' in " + where + " must be a string");
  return std::string(*node->value<std::string_view>());
}

Result<std::uint32_t> FieldReader::int_field(const toml::table& table, std::string_view key,
                                             const std::string& where, std::int64_t min,
                                             std::int64_t max, std::uint32_t fallback) const {
  const toml::node* node = table.get(key);
  if (!node) return fallback;
  if (!node->is_integer())
    return error_at(node, "'" + std::string(key) + "' in " + where + " must be an integer");
  const std::int64_t v = *node->value<std::int64_t>();
  if (v < min || v > max)
    return error_at(node, "'" + std::string(key) + "' in " + where + " is " + std::to_string(v) +
                              ", must be in [" + std::to_string(min) + ", " + std::to_string(max) +
                              "]");
  return static_cast<std::uint32_t>(v);
}

Result<std::string> FieldReader::directory_name(const toml::table& table, std::string_view key,
                                                const std::string& where,
                                                const toml::node* owner) const {
  auto name = string_field(table, key, where, true, owner);
  if (!name) return name.error();
  if (const std::string problem = directory_name_problem(*name); !problem.empty())
    return error_at(table.get(key), "name '" + printable_name(*name) + "' " + problem);
  return name;
}

Result<bool> FieldReader::bool_field(const toml::table& t, std::string_view key,
                                     const std::string& where, bool fallback) const {
  const toml::node* node = t.get(key);
  if (!node) return fallback;
  if (!node->is_boolean())
    return error_at(node, "'" + std::string(key) + "' in " + where + " must be true or false");
  return *node->value<bool>();
}

Result<toml::table> FieldReader::parse_toml(std::string_view text) const {
  try {
    return toml::parse(text, source_);
  } catch (const toml::parse_error& e) {
    return make_error(escape_control_characters(source_ + ":" +
                                                std::to_string(e.source().begin.line) +
                                                ": TOML syntax: " + std::string(e.description())));
  }
}

Result<double> FieldReader::number_field(const toml::table& t, std::string_view key,
                                         const std::string& where, double min, double max,
                                         double fallback) const {
  const toml::node* node = t.get(key);
  if (!node) return fallback;
  if (!node->is_number())
    return error_at(node, "'" + std::string(key) + "' in " + where + " must be a number");
  // An integer is range-checked as an integer: value<double>() is empty for one a double
  // cannot hold exactly (above 2^53), and a huge one must not round into the range.
  double v = 0;
  if (const auto integer = node->value_exact<std::int64_t>()) {
    if (static_cast<double>(*integer) < min || static_cast<double>(*integer) > max)
      return error_at(node, fmt::format("'{}' in {} is {}, must be in [{}, {}]", key, where,
                                        *integer, min, max));
    v = static_cast<double>(*integer);
  } else {
    v = node->as_floating_point()->get();
  }
  if (!(v >= min && v <= max))
    return error_at(node,
                    fmt::format("'{}' in {} is {}, must be in [{}, {}]", key, where, v, min, max));
  return v;
}

bool has_top_level_key(std::string_view toml_text, std::initializer_list<std::string_view> keys) {
  try {
    const toml::table root = toml::parse(toml_text);
    for (std::string_view key : keys)
      if (root.get(key)) return true;
    return false;
  } catch (const toml::parse_error&) {
    return false;
  }
}

}  // namespace gpuoverlap::scenario_grammar
