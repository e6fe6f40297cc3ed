#include "barriers/d3d12_names.h"
#include "scenarios/scenario_grammar.h"

namespace gpuoverlap::scenario_grammar {

// A D3D12 name field of a dependency table (masks join names with '|').
template <typename Value, typename Parse>
Status ScenarioParser::d3d12_field(const toml::table& t, std::string_view key,
                                   const std::string& where, const toml::node* owner, Parse parse,
                                   const std::string& names, std::optional<Value>& out) const {
  return named_field(t, key, where, owner, parse, names + "; masks join names with '|'", out);
}

// The table form of a dependency: { workload = ..., barrier = ..., and that barrier's
// details }. Keys that do not belong to the chosen barrier kind are errors, not ignored.
Status ScenarioParser::parse_dependency_table(const toml::table& t, const toml::node& node,
                                              const std::string& named, BarrierRequest& request,
                                              std::string& producer) {
  const std::string where = "a dependency of " + named;
  GPUOVERLAP_TRY(only_keys(t,
                           {"workload", "barrier", "split_policy", "reads_output", "state_before",
                            "state_after", "type", "sync_before", "sync_after", "access_before",
                            "access_after", "layout_before", "layout_after", "subresources"},
                           where));
  auto name = string_field(t, "workload", where, true, &node);
  if (!name) return name.error();
  producer = *name;
  auto barrier = string_field(t, "barrier", where, false, &node);
  if (!barrier) return barrier.error();
  if (!barrier->empty()) {
    auto parsed = parse_barrier_kind(*barrier);
    if (!parsed) return error_at(t.get("barrier"), barrier_error(*barrier));
    request.kind = *parsed;
  }
  auto policy = string_field(t, "split_policy", where, false, &node);
  if (!policy) return policy.error();
  if (!policy->empty()) {
    auto parsed = parse_split_policy(*policy);
    if (!parsed)
      return error_at(t.get("split_policy"), "unknown split_policy '" + *policy + "' (" +
                                                 names_list(kSplitPolicyNames) + ")");
    if (!is_split(request.kind))
      return error_at(t.get("split_policy"),
                      "split_policy applies to split and enhanced-split barriers, not '" +
                          std::string(to_string(request.kind)) + "'");
    request.split_policy = *parsed;
  }
  if (const toml::node* reads = t.get("reads_output")) {
    if (!reads->is_boolean())
      return error_at(reads, "'reads_output' in " + where + " must be true or false");
    request.reads_output = *reads->value<bool>();
  }
  GPUOVERLAP_TRY(d3d12_field(t, "state_before", where, &node, parse_resource_states,
                             resource_state_names(), request.state_before));
  GPUOVERLAP_TRY(d3d12_field(t, "state_after", where, &node, parse_resource_states,
                             resource_state_names(), request.state_after));
  GPUOVERLAP_TRY(d3d12_field(t, "type", where, &node, parse_barrier_type,
                             "global | buffer | texture", request.type));
  GPUOVERLAP_TRY(d3d12_field(t, "sync_before", where, &node, parse_barrier_sync,
                             barrier_sync_names(), request.sync_before));
  GPUOVERLAP_TRY(d3d12_field(t, "sync_after", where, &node, parse_barrier_sync,
                             barrier_sync_names(), request.sync_after));
  GPUOVERLAP_TRY(d3d12_field(t, "access_before", where, &node, parse_barrier_access,
                             barrier_access_names(), request.access_before));
  GPUOVERLAP_TRY(d3d12_field(t, "access_after", where, &node, parse_barrier_access,
                             barrier_access_names(), request.access_after));
  GPUOVERLAP_TRY(d3d12_field(t, "layout_before", where, &node, parse_barrier_layout,
                             barrier_layout_names(), request.layout_before));
  GPUOVERLAP_TRY(d3d12_field(t, "layout_after", where, &node, parse_barrier_layout,
                             barrier_layout_names(), request.layout_after));
  if (const toml::node* sub = t.get("subresources")) {
    if (request.kind == BarrierKind::none || request.kind == BarrierKind::uav)
      return error_at(sub, "subresources in " + where +
                               " name what a transition covers; barrier '" +
                               std::string(to_string(request.kind)) + "' has none");
    auto parsed = parse_subresources(*sub, where);
    if (!parsed) return parsed.error();
    request.subresources = *parsed;
  }
  const bool legacy_fields = request.state_before || request.state_after;
  const bool enhanced_fields = request.type || request.sync_before || request.sync_after ||
                               request.access_before || request.access_after ||
                               request.layout_before || request.layout_after;
  if (legacy_fields && request.kind != BarrierKind::legacy && request.kind != BarrierKind::split)
    return error_at(&node, "state_before/state_after in " + where +
                               " describe legacy transitions; barrier is '" +
                               std::string(to_string(request.kind)) + "'");
  if (enhanced_fields && !is_enhanced(request.kind))
    return error_at(&node, "type/sync_*/access_*/layout_* in " + where +
                               " describe enhanced barriers; barrier is '" +
                               std::string(to_string(request.kind)) + "'");
  return ok_status();
}

// subresources = { mips = [first, count], slices = [first, count] }: either key may be left
// out (all mips, all slices). Whether the range fits the texture is the barrier planner's
// rule (subresource-range), where the texture is known.
Result<SubresourceRequest> ScenarioParser::parse_subresources(const toml::node& node,
                                                              const std::string& where) {
  const std::string what = "'subresources' in " + where;
  const toml::table* table = node.as_table();
  if (!table)
    return error_at(&node, what +
                               " must be a table: { mips = [first, count], slices = [first, "
                               "count] }");
  GPUOVERLAP_TRY(only_keys(*table, {"mips", "slices"}, what));
  SubresourceRequest request;
  for (const char* key : {"mips", "slices"}) {
    const toml::node* value = table->get(key);
    if (!value) continue;
    const toml::array* pair = value->as_array();
    const std::string named = "'" + std::string(key) + "' of " + what;
    if (!pair || pair->size() != 2 || !(*pair)[0].is_integer() || !(*pair)[1].is_integer())
      return error_at(value, named + " must be [first, count], two integers");
    const std::int64_t first = *(*pair)[0].value<std::int64_t>();
    const std::int64_t count = *(*pair)[1].value<std::int64_t>();
    if (first < 0 || first >= kMaxSubresourceSpan)
      return error_at(value, named + ": first is " + std::to_string(first) + "; it must be 0 to " +
                                 std::to_string(kMaxSubresourceSpan - 1));
    if (count < 1 || count > kMaxSubresourceSpan)
      return error_at(value, named + ": count is " + std::to_string(count) + "; it must be 1 to " +
                                 std::to_string(kMaxSubresourceSpan));
    const SubresourceRequest::Span span{static_cast<std::uint32_t>(first),
                                        static_cast<std::uint32_t>(count)};
    (std::string_view(key) == "mips" ? request.mips : request.slices) = span;
  }
  return request;
}

}  // namespace gpuoverlap::scenario_grammar
