// The TOML field readers every grammar of a scenario file shares (the scenario's, [background]'s,
// [cpu]'s, [preemption]'s and a study's): each reads one key of a table, checks its type and
// range, and reports a mistake as "<source>:<line>: <reason>". Internal to scenarios/.
#pragma once

#include <toml++/toml.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace gpuoverlap::scenario_grammar {

class FieldReader {
 public:
  explicit FieldReader(std::string source) : source_(std::move(source)) {}

  // The file's name, as every message starts.
  const std::string& source() const { return source_; }

  // "<source>:<line>: <reason>", or "<source>: <reason>" where `node` has no line.
  Error error_at(const toml::node* node, const std::string& reason) const;

  // Refuses a key of `table` that is not one of `allowed`, listing them.
  Status only_keys(const toml::table& table, std::initializer_list<std::string_view> allowed,
                   const std::string& where) const;

  // A string; empty when absent and not `required` (an absent required key is reported at
  // `owner`).
  Result<std::string> string_field(const toml::table& table, std::string_view key,
                                   const std::string& where, bool required,
                                   const toml::node* owner) const;

  // Integer in [min, max]; `fallback` when absent.
  Result<std::uint32_t> int_field(const toml::table& table, std::string_view key,
                                  const std::string& where, std::int64_t min, std::int64_t max,
                                  std::uint32_t fallback) const;

  // A number (integer or float) in [min, max]; `fallback` when absent.
  Result<double> number_field(const toml::table& t, std::string_view key, const std::string& where,
                              double min, double max, double fallback) const;

  Result<bool> bool_field(const toml::table& t, std::string_view key, const std::string& where,
                          bool fallback) const;

  // A name that becomes a directory (scenario, study, condition): scenarios/names.h.
  Result<std::string> directory_name(const toml::table& table, std::string_view key,
                                     const std::string& where, const toml::node* owner) const;

  // The whole file, or its first syntax error with its line.
  Result<toml::table> parse_toml(std::string_view text) const;

  // A field naming one value of a set: parsed by `parse`, listed by `names` on error; `out`
  // is left alone when the key is absent.
  template <typename Value, typename Parse>
  Status named_field(const toml::table& t, std::string_view key, const std::string& where,
                     const toml::node* owner, Parse parse, const std::string& names,
                     Value& out) const {
    auto text = string_field(t, key, where, false, owner);
    if (!text) return text.error();
    if (text->empty()) return ok_status();
    auto parsed = parse(*text);
    if (!parsed)
      return error_at(t.get(key), "unknown " + std::string(key) + " '" + *text + "' in " + where +
                                      " (" + names + ")");
    out = *parsed;
    return ok_status();
  }

  // A key that names one value or, as an array, several (a preemption matrix). Absent: the
  // fallback alone.
  template <typename Value, typename Parse>
  Result<std::vector<Value>> names_field(const toml::table& t, std::string_view key,
                                         const std::string& where, Parse parse,
                                         const std::string& names, Value fallback) const {
    const toml::node* node = t.get(key);
    if (!node) return std::vector<Value>{fallback};
    std::vector<const toml::node*> items;
    if (const toml::array* a = node->as_array()) {
      if (a->empty()) return error_at(node, "'" + std::string(key) + "' in " + where + " is empty");
      for (const toml::node& item : *a) items.push_back(&item);
    } else {
      items.push_back(node);
    }
    std::vector<Value> out;
    for (const toml::node* item : items) {
      const auto text = item->value<std::string_view>();
      if (!text)
        return error_at(item, "'" + std::string(key) + "' in " + where +
                                  " must be a string or an array of strings");
      const auto parsed = parse(*text);
      if (!parsed)
        return error_at(item, "unknown " + std::string(key) + " '" + std::string(*text) + "' in " +
                                  where + " (" + names + ")");
      if (std::find(out.begin(), out.end(), *parsed) != out.end())
        return error_at(item,
                        "'" + std::string(*text) + "' appears twice in '" + std::string(key) + "'");
      out.push_back(*parsed);
    }
    return out;
  }

 protected:
  std::string source_;
};

// True when the TOML text has any of the top-level keys; false for a syntax error, which the
// parser of the file's kind then reports with its line.
bool has_top_level_key(std::string_view toml_text, std::initializer_list<std::string_view> keys);

}  // namespace gpuoverlap::scenario_grammar
