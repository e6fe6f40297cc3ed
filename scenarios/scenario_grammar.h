// The grammar of a scenario file, split over the files that read its parts: the top level,
// [queues.NAME] and the graph checks (scenario_parser.cpp), [[texture]] and the targets that
// write one (parse_textures.cpp), [[workload]] (parse_workloads.cpp), a dependency's table
// (parse_dependency.cpp), and the [background] and [cpu] tables (parse_background.cpp,
// parse_cpu.cpp), which a study's conditions share. Internal to scenarios/.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "scenarios/names.h"
#include "scenarios/scenario.h"
#include "scenarios/scenario_fields.h"

namespace gpuoverlap::scenario_grammar {

// [background]: docs/scenario-format.md, "Background work". In a study (`in_study`), what this
// host cannot give (the other OS's policy, CPUs it lacks) is not a mistake in the file: the
// study reports that condition as not run here (why_not_here), so one preset serves both.
Result<background::BackgroundSpec> parse_background_table(const FieldReader& fields,
                                                          const toml::node& node,
                                                          const std::string& where,
                                                          bool in_study = false);

// [cpu]: docs/scenario-format.md, "The CPU side of a frame".
Result<jobs::CpuFrameSpec> parse_cpu_table(const FieldReader& fields, const toml::node& node,
                                           const std::string& where);

// One scenario file's parse: the nodes it keeps are for the messages of later checks, which
// name the line of the workload, dependency or heap at fault.
class ScenarioParser : public FieldReader {
 public:
  using FieldReader::FieldReader;

  Result<Scenario> parse(std::string_view text);

 private:
  static std::string barrier_error(const std::string& text);

  // A texture's or a workload's `name`: a label (scenarios/names.h) no other of `kind` has.
  template <typename Spec>
  Result<std::string> unique_label(const toml::table& t, const toml::node& element,
                                   const std::string& where, const std::vector<Spec>& others,
                                   std::string_view kind) const {
    auto name = string_field(t, "name", where, true, &element);
    if (!name) return name.error();
    if (const std::string problem = label_problem(*name); !problem.empty())
      return error_at(t.get("name"), where + ": name '" + printable_name(*name) + "' " + problem);
    for (const auto& other : others)
      if (other.name == *name)
        return error_at(t.get("name"), "duplicate " + std::string(kind) + " name '" + *name + "'");
    return name;
  }

  // scenario_parser.cpp
  Status parse_queues(const toml::table& root, Scenario& s);
  Status check_graph(Scenario& s);

  // parse_textures.cpp
  Status parse_textures(const toml::table& root, Scenario& s);
  Result<TextureTarget> parse_target(const toml::node& node, const Scenario& s,
                                     const std::string& named);
  Status parse_written_target(const toml::node& target, const std::string& named, const Scenario& s,
                              WorkloadSpec& spec);

  // parse_workloads.cpp
  Status parse_workloads(const toml::table& root, Scenario& s);
  Status parse_copy(const toml::table& w, const std::string& named, const Scenario& s,
                    WorkloadSpec& spec);
  Status parse_shader_work(const toml::table& w, const std::string& named, const Scenario& s,
                           WorkloadSpec& spec);
  Status finish_readbacks(Scenario& s);

  // parse_dependency.cpp
  template <typename Value, typename Parse>
  Status d3d12_field(const toml::table& t, std::string_view key, const std::string& where,
                     const toml::node* owner, Parse parse, const std::string& names,
                     std::optional<Value>& out) const;
  Status parse_dependency_table(const toml::table& t, const toml::node& node,
                                const std::string& named, BarrierRequest& request,
                                std::string& producer);
  Result<SubresourceRequest> parse_subresources(const toml::node& node, const std::string& where);

  std::vector<std::vector<const toml::node*>> dependency_nodes_;  // [consumer][dependency]
  std::vector<const toml::node*> lines_;                          // per workload, for messages
  std::vector<const toml::node*> heap_nodes_;  // per texture: its heap key (null: none)
};

}  // namespace gpuoverlap::scenario_grammar
