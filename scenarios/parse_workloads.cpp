#include "scenarios/names.h"
#include "scenarios/scenario_grammar.h"

namespace gpuoverlap::scenario_grammar {

Status ScenarioParser::parse_workloads(const toml::table& root, Scenario& s) {
  const toml::node* node = root.get("workload");
  if (!node) return error_at(nullptr, "the scenario needs at least one [[workload]]");
  const toml::array* array = node->as_array();
  if (!array || array->empty())
    return error_at(node, "'workload' must be a non-empty array of [[workload]] tables");
  if (array->size() > kMaxWorkloadsPerScenario)
    return error_at(node, "at most " + std::to_string(kMaxWorkloadsPerScenario) +
                              " workloads per scenario, got " + std::to_string(array->size()));
  // Dependencies are resolved after every name is known.
  struct PendingDependency {
    std::string producer;
    BarrierRequest barrier;
    const toml::node* node;
  };
  std::vector<std::vector<PendingDependency>> pending;
  for (const toml::node& element : *array) {
    const toml::table* w = element.as_table();
    if (!w) return error_at(&element, "each [[workload]] must be a table");
    const std::string where = "[[workload]] #" + std::to_string(s.workloads.size() + 1);
    GPUOVERLAP_TRY(only_keys(
        *w, {"name", "queue", "kind", "groups", "iterations", "target", "depends_on", "bytes"},
        where));
    WorkloadSpec spec;
    auto name = unique_label(*w, element, where, s.workloads, "workload");
    if (!name) return name.error();
    spec.name = *name;
    const std::string named = "workload '" + spec.name + "'";
    auto queue = string_field(*w, "queue", named, true, &element);
    if (!queue) return queue.error();
    bool found = false;
    for (std::size_t q = 0; q < s.queues.size(); ++q)
      if (s.queues[q].name == *queue) {
        spec.queue = q;
        found = true;
      }
    if (!found)
      return error_at(w->get("queue"),
                      named + " uses undeclared queue '" + printable_name(*queue) + "'");
    auto kind = string_field(*w, "kind", named, false, &element);
    if (!kind) return kind.error();
    if (!kind->empty()) {
      auto parsed = parse_workload_kind(*kind);
      if (!parsed)
        return error_at(w->get("kind"),
                        "unknown kind '" + *kind + "' (" + names_list(kWorkloadKindNames) + ")");
      spec.kind = *parsed;
    }
    if (spec.kind == WorkloadKind::graphics && s.queues[spec.queue].type != QueueType::direct)
      return error_at(w->get("kind"), named + " is graphics but queue '" + *queue +
                                          "' is a compute queue (only direct queues draw)");
    if (spec.kind == WorkloadKind::copy) {
      GPUOVERLAP_TRY(parse_copy(*w, named, s, spec));
    } else {
      if (const toml::node* given = w->get("bytes"))
        return error_at(given, named + " is not a copy: 'bytes' sizes a copy only");
      GPUOVERLAP_TRY(parse_shader_work(*w, named, s, spec));
    }

    pending.emplace_back();
    if (const toml::node* deps = w->get("depends_on")) {
      const toml::array* list = deps->as_array();
      if (!list) return error_at(deps, "'depends_on' of " + named + " must be an array");
      for (const toml::node& dep : *list) {
        PendingDependency d{{}, {}, &dep};
        d.barrier.kind = s.default_barrier;
        d.barrier.split_policy = s.default_split_policy;
        if (dep.is_string()) {
          d.producer = std::string(*dep.value<std::string_view>());
        } else if (const toml::table* t = dep.as_table()) {
          GPUOVERLAP_TRY(parse_dependency_table(*t, dep, named, d.barrier, d.producer));
        } else {
          return error_at(&dep, "each dependency of " + named +
                                    " is a workload name or { workload = ..., barrier = ... }");
        }
        pending.back().push_back(std::move(d));
      }
    }
    lines_.push_back(&element);
    s.workloads.push_back(std::move(spec));
  }

  for (std::size_t c = 0; c < s.workloads.size(); ++c) {
    const std::string named = "workload '" + s.workloads[c].name + "'";
    for (const PendingDependency& d : pending[c]) {
      std::size_t producer = s.workloads.size();
      for (std::size_t p = 0; p < s.workloads.size(); ++p)
        if (s.workloads[p].name == d.producer) producer = p;
      if (producer == s.workloads.size())
        return error_at(
            d.node, named + " depends on unknown workload '" + printable_name(d.producer) + "'");
      if (producer == c) return error_at(d.node, named + " depends on itself");
      for (const auto& existing : s.workloads[c].depends_on)
        if (existing.producer == producer)
          return error_at(d.node, named + " lists '" + d.producer + "' twice in depends_on");
      s.workloads[c].depends_on.push_back({producer, d.barrier});
      dependency_nodes_.resize(s.workloads.size());
      dependency_nodes_[c].push_back(d.node);
    }
  }
  return finish_readbacks(s);
}

// A copy's keys (`bytes`, `target`): it has no shader, so what sizes a dispatch or a draw
// does not apply. It reads its upload buffer, or with `depends_on` (a readback) its one
// producer's output, whose size finish_readbacks gives it. Into a declared texture's
// subresource (`target`) it moves exactly that subresource's bytes.
Status ScenarioParser::parse_copy(const toml::table& w, const std::string& named, const Scenario& s,
                                  WorkloadSpec& spec) {
  for (const char* key : {"groups", "iterations"})
    if (const toml::node* given = w.get(key))
      return error_at(given, named + " is a copy: '" + key +
                                 "' does not apply (a copy moves 'bytes' from its upload "
                                 "buffer, or from what it depends on, into its output)");
  spec.groups = spec.iterations = 0;  // no threads: nothing reads them for a copy
  if (const toml::node* source = w.get("depends_on")) {
    if (const toml::node* target = w.get("target"))
      return error_at(target, named +
                                  " reads back what it depends on into a buffer: 'target' "
                                  "does not apply (a copy writes a texture from its upload "
                                  "buffer only)");
    const toml::array* list = source->as_array();
    if (list && list->size() != 1)
      return error_at(source, named +
                                  " is a copy: it reads back one workload's output, so "
                                  "'depends_on' names exactly one");
    return ok_status();  // its bytes are its source's (finish_readbacks)
  }
  if (const toml::node* target = w.get("target")) {
    GPUOVERLAP_TRY(parse_written_target(*target, named, s, spec));
    if (spec.target->discard)
      return error_at(target, named +
                                  " is a copy: 'discard' does not apply (D3D12 discards "
                                  "into a render-target, depth or unordered-access "
                                  "layout, and a copy writes in COPY_DEST)");
    const TextureSpec& texture = s.textures[spec.target->texture];
    if (is_depth(texture.format))
      return error_at(target, named + " copies into '" + texture.name +
                                  "', which is d32: a depth texture is written by draws "
                                  "only (copies write color textures and buffers)");
    spec.bytes = subresource_bytes(texture, spec.target->mip);
    if (const toml::node* given = w.get("bytes");
        given && given->value<std::int64_t>() != static_cast<std::int64_t>(spec.bytes))
      return error_at(given, named + " copies into mip " + std::to_string(spec.target->mip) +
                                 " of '" + texture.name + "', which takes " +
                                 std::to_string(spec.bytes) +
                                 " bytes: leave 'bytes' out or give exactly that");
    return ok_status();
  }
  static_assert(kMaxCopyBytes <= UINT32_MAX, "int_field reads 32-bit values");
  auto bytes = int_field(w, "bytes", named, kMinCopyBytes, kMaxCopyBytes,
                         static_cast<std::uint32_t>(kDefaultCopyBytes));
  if (!bytes) return bytes.error();
  if (*bytes % 4 != 0)
    return error_at(w.get("bytes"), "'bytes' of " + named + " is " + std::to_string(*bytes) +
                                        ", not a whole number of 4-byte words");
  spec.bytes = *bytes;
  return ok_status();
}

// A dispatch's or a draw's keys: `groups`, `iterations` and `target`.
Status ScenarioParser::parse_shader_work(const toml::table& w, const std::string& named,
                                         const Scenario& s, WorkloadSpec& spec) {
  // A dispatch's groups are bounded by the workgroups one dispatch may run, a draw's rows
  // by a render target's height.
  auto groups = int_field(w, "groups", named, 1,
                          spec.kind == WorkloadKind::compute ? kMaxComputeGroups : kMaxGroups,
                          kDefaultGroups);
  if (!groups) return groups.error();
  spec.groups = *groups;
  auto iterations = int_field(w, "iterations", named, 1, kMaxIterations, kDefaultIterations);
  if (!iterations) return iterations.error();
  spec.iterations = *iterations;
  if (const toml::node* target = w.get("target")) {
    const bool dispatch = spec.kind == WorkloadKind::compute;
    if (w.get("groups"))
      return error_at(w.get("groups"),
                      named +
                          (dispatch ? " writes a texture: it runs a thread per pixel of"
                                    : " renders into a texture: its pixels are") +
                          " the target mip's, so 'groups' does not apply");
    GPUOVERLAP_TRY(parse_written_target(*target, named, s, spec));
    const TextureTarget* parsed = &*spec.target;
    const TextureSpec& texture = s.textures[parsed->texture];
    if (dispatch) {
      // An unordered-access store of one float: perlin.hlsl's RWTexture2D<float>, whose
      // SPIR-V names the R32f format (glslang cannot leave it unknown).
      if (texture.format != TextureFormat::r32f)
        return error_at(target, named + " is a dispatch writing '" + texture.name + "', which is " +
                                    std::string(to_string(texture.format)) +
                                    ": a dispatch writes r32f textures only (a draw renders "
                                    "into any format)");
      const std::uint64_t pixels = std::uint64_t{mip_size(texture.width, parsed->mip)} *
                                   mip_size(texture.height, parsed->mip);
      if (pixels / kThreadsPerDispatchGroup > kMaxDispatchWorkgroupsX)
        return error_at(
            target, named + " writes mip " + std::to_string(parsed->mip) + " of '" + texture.name +
                        "', " + std::to_string(pixels) + " pixels: more than " +
                        std::to_string(kMaxDispatchWorkgroupsX) + " groups of " +
                        std::to_string(kThreadsPerDispatchGroup) + " threads in one dispatch");
      if (pixels % kThreadsPerDispatchGroup != 0)
        return error_at(target, named + " writes mip " + std::to_string(parsed->mip) + " of '" +
                                    texture.name + "', " + std::to_string(pixels) +
                                    " pixels: a dispatch runs a thread per pixel in groups "
                                    "of " +
                                    std::to_string(kThreadsPerDispatchGroup) +
                                    ", so the mip's pixels must be a multiple of that");
    }
  }

  return ok_status();
}

// Readback copies (a copy with depends_on) take their bytes from their source: a dispatch's
// output buffer, a draw's render target or declared texture's subresource, an upload copy's
// output. Their own output is a readback buffer in host memory, which no workload reads.
Status ScenarioParser::finish_readbacks(Scenario& s) {
  for (std::size_t c = 0; c < s.workloads.size(); ++c) {
    WorkloadSpec& copy = s.workloads[c];
    const std::string named = "workload '" + copy.name + "'";
    for (std::size_t i = 0; i < copy.depends_on.size(); ++i) {
      const WorkloadSpec& producer = s.workloads[copy.depends_on[i].producer];
      if (is_readback(producer))
        return error_at(dependency_nodes_[c][i],
                        named + " depends on '" + producer.name +
                            "', a readback: its output is read by the CPU, not by workloads");
    }
    if (!is_readback(copy)) continue;
    const DependencySpec& source = copy.depends_on.front();
    if (source.barrier.reads_output == false || source.barrier.kind == BarrierKind::none)
      return error_at(dependency_nodes_[c][0],
                      named + " is a copy that reads back '" + s.workloads[source.producer].name +
                          "': it reads that output, behind a barrier (not 'none', and "
                          "reads_output stays true)");
    copy.bytes = output_bytes(s, source.producer);
    const toml::node* given = lines_[c]->as_table()->get("bytes");
    if (given && given->value<std::int64_t>() != static_cast<std::int64_t>(copy.bytes))
      return error_at(given, named + " reads back '" + s.workloads[source.producer].name +
                                 "', whose output takes " + std::to_string(copy.bytes) +
                                 " bytes: leave 'bytes' out or give exactly that");
  }
  return ok_status();
}

}  // namespace gpuoverlap::scenario_grammar
