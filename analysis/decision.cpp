#include "analysis/decision.h"

namespace gpuoverlap {

std::string_view to_string(Decision decision) { return name_of(kDecisionNames, decision); }

std::ostream& operator<<(std::ostream& out, Decision decision) {
  return out << to_string(decision);
}

std::optional<Decision> parse_decision(std::string_view text) {
  return value_of(kDecisionNames, text);
}

std::optional<Decision> decision_of(const nlohmann::json& object) {
  if (!object.is_object()) return std::nullopt;
  const auto it = object.find("verdict");
  if (it == object.end() || !it->is_string()) return std::nullopt;
  return parse_decision(it->get_ref<const std::string&>());
}

}  // namespace gpuoverlap
