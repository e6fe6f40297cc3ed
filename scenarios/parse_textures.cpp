#include <algorithm>

#include "scenarios/names.h"
#include "scenarios/scenario_grammar.h"

namespace gpuoverlap::scenario_grammar {

// [[texture]]: name, format, width, height, mips, slices (resources/texture.h).
Status ScenarioParser::parse_textures(const toml::table& root, Scenario& s) {
  const toml::node* node = root.get("texture");
  if (!node) return ok_status();
  const toml::array* array = node->as_array();
  if (!array) return error_at(node, "'texture' must be an array of [[texture]] tables");
  if (array->size() > kMaxTexturesPerScenario)
    return error_at(node, "at most " + std::to_string(kMaxTexturesPerScenario) +
                              " textures per scenario, got " + std::to_string(array->size()));
  for (const toml::node& element : *array) {
    const toml::table* t = element.as_table();
    if (!t) return error_at(&element, "each [[texture]] must be a table");
    const std::string where = "[[texture]] #" + std::to_string(s.textures.size() + 1);
    GPUOVERLAP_TRY(
        only_keys(*t, {"name", "format", "width", "height", "mips", "slices", "heap"}, where));
    TextureSpec spec;
    auto name = unique_label(*t, element, where, s.textures, "texture");
    if (!name) return name.error();
    spec.name = *name;
    const std::string named = "texture '" + spec.name + "'";
    auto format = string_field(*t, "format", named, false, &element);
    if (!format) return format.error();
    if (!format->empty()) {
      auto parsed = parse_texture_format(*format);
      if (!parsed)
        return error_at(t->get("format"), "unknown format '" + *format + "' (" +
                                              names_list(kTextureFormatNames) + ")");
      spec.format = *parsed;
    }
    for (const char* key : {"width", "height"})
      if (!t->get(key)) return error_at(&element, named + " needs '" + key + "'");
    auto width = int_field(*t, "width", named, 1, kMaxTextureSize, 1);
    if (!width) return width.error();
    auto height = int_field(*t, "height", named, 1, kMaxTextureSize, 1);
    if (!height) return height.error();
    spec.width = *width;
    spec.height = *height;
    const std::uint32_t full = full_mip_count(spec.width, spec.height);
    auto mips = int_field(*t, "mips", named, 1, full, 1);
    if (!mips) return mips.error();
    auto slices = int_field(*t, "slices", named, 1, kMaxTextureSlices, 1);
    if (!slices) return slices.error();
    spec.mips = *mips;
    spec.slices = *slices;
    if (texture_bytes(spec) > kMaxTextureBytes)
      return error_at(&element, named + " takes " + std::to_string(texture_bytes(spec) >> 20) +
                                    " MiB; at most " + std::to_string(kMaxTextureBytes >> 20) +
                                    " MiB per texture");
    auto heap = string_field(*t, "heap", named, false, &element);
    if (!heap) return heap.error();
    if (t->get("heap")) {
      if (const std::string problem = label_problem(*heap); !problem.empty())
        return error_at(t->get("heap"),
                        named + ": heap name '" + printable_name(*heap) + "' " + problem);
      // A hand-over makes the whole texture undefined and brings it back in one barrier; a
      // texture of several subresources would need one per subresource state.
      if (spec.subresources() != 1)
        return error_at(t->get("heap"), named + " is placed in heap '" + *heap + "' with " +
                                            std::to_string(spec.mips) + " mip(s) and " +
                                            std::to_string(spec.slices) +
                                            " slice(s): a texture in a heap has one of each");
      spec.heap = *heap;
    }
    s.textures.push_back(std::move(spec));
    heap_nodes_.push_back(t->get("heap"));
  }
  // A heap of one texture aliases nothing: most likely a misspelt heap name.
  for (std::size_t i = 0; i < s.textures.size(); ++i) {
    const std::string& heap = s.textures[i].heap;
    if (heap.empty()) continue;
    const auto sharing = std::count_if(s.textures.begin(), s.textures.end(),
                                       [&](const TextureSpec& t) { return t.heap == heap; });
    if (sharing == 1)
      return error_at(heap_nodes_[i], "texture '" + s.textures[i].name +
                                          "' is the only one in heap '" + heap +
                                          "': textures in one heap alias each other, so a heap "
                                          "holds two or more");
  }
  return ok_status();
}

// target = { texture = NAME, mip = M, slice = S, discard = BOOL } on a draw or a dispatch
// (mip and slice default to 0, discard to false).
Result<TextureTarget> ScenarioParser::parse_target(const toml::node& node, const Scenario& s,
                                                   const std::string& named) {
  const std::string where = "'target' of " + named;
  const toml::table* t = node.as_table();
  if (!t)
    return error_at(&node, where + " must be a table: { texture = NAME, mip = M, slice = S }");
  GPUOVERLAP_TRY(only_keys(*t, {"texture", "mip", "slice", "discard"}, where));
  auto texture = string_field(*t, "texture", where, true, &node);
  if (!texture) return texture.error();
  TextureTarget target{s.textures.size(), 0, 0};
  for (std::size_t i = 0; i < s.textures.size(); ++i)
    if (s.textures[i].name == *texture) target.texture = i;
  if (target.texture == s.textures.size())
    return error_at(t->get("texture"),
                    where + " names undeclared texture '" + printable_name(*texture) + "'");
  const TextureSpec& spec = s.textures[target.texture];
  auto mip =
      int_field(*t, "mip",
                where + " (texture '" + spec.name + "' has " + std::to_string(spec.mips) + " mips)",
                0, spec.mips - 1, 0);
  if (!mip) return mip.error();
  auto slice = int_field(
      *t, "slice",
      where + " (texture '" + spec.name + "' has " + std::to_string(spec.slices) + " slices)", 0,
      spec.slices - 1, 0);
  if (!slice) return slice.error();
  target.mip = *mip;
  target.slice = *slice;
  if (const toml::node* discard = t->get("discard")) {
    const auto* value = discard->as_boolean();
    if (!value) return error_at(discard, where + ": 'discard' must be true or false");
    target.discard = value->get();
  }
  return target;
}

// `target` of a workload that writes a declared texture's subresource (a draw, a dispatch,
// a copy), with the rule every writer shares.
Status ScenarioParser::parse_written_target(const toml::node& target, const std::string& named,
                                            const Scenario& s, WorkloadSpec& spec) {
  auto parsed = parse_target(target, s, named);
  if (!parsed) return parsed.error();
  const TextureSpec& texture = s.textures[parsed->texture];
  // Each frame starts with the texture's subresources restored on one queue; a writer on
  // another would race that restore. Several writers may write one subresource, each
  // after a read of the one before (the planner's target-rewrite rule).
  for (const WorkloadSpec& other : s.workloads)
    if (other.target && other.target->texture == parsed->texture && other.queue != spec.queue)
      return error_at(&target, named + " writes '" + texture.name + "' on queue '" +
                                   s.queues[spec.queue].name + "', '" + other.name +
                                   "' on queue '" + s.queues[other.queue].name +
                                   "': a texture's writers share one queue");
  spec.target = *parsed;
  return ok_status();
}

}  // namespace gpuoverlap::scenario_grammar
