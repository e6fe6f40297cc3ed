#include "scenarios/scenario_toml.h"

#include <fmt/format.h>

#include "barriers/d3d12_names.h"

namespace gpuoverlap {

std::string toml_string(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\')
      out += '\\', out += c;
    else if (byte < 0x20 || byte == 0x7f)
      out += fmt::format("\\u{:04X}", byte);
    else
      out += c;
  }
  return out + "\"";
}

namespace {

void write_background(const background::BackgroundSpec& spec, std::string& out) {
  using namespace background;
  const BackgroundSpec defaults;
  out += "\n[background]\n";
  auto text = [&](const char* key, std::string_view value, std::string_view fallback) {
    if (value != fallback) out += fmt::format("{} = {}\n", key, toml_string(value));
  };
  auto number = [&](const char* key, std::uint32_t value, std::uint32_t fallback) {
    if (value != fallback) out += fmt::format("{} = {}\n", key, value);
  };
  auto flag = [&](const char* key, bool value, bool fallback) {
    if (value != fallback) out += fmt::format("{} = {}\n", key, value);
  };
  text("mode", to_string(spec.mode), to_string(defaults.mode));
  text("action", to_string(spec.action), to_string(defaults.action));
  text("workflow", to_string(spec.workflow), to_string(defaults.workflow));
  flag("action_every_frame", spec.action_every_frame, defaults.action_every_frame);
  number("tasks", spec.tasks, defaults.tasks);
  flag("continuous", spec.continuous, defaults.continuous);
  number("max_concurrent", spec.max_concurrent, defaults.max_concurrent);
  text("policy", to_string(spec.policy), to_string(defaults.policy));
  text("cpus", describe(spec.cpus), describe(defaults.cpus));
  text("allocator", name_of(kAllocatorNames, spec.allocator),
       name_of(kAllocatorNames, defaults.allocator));
  flag("cgroup_idle", spec.cgroup_idle, defaults.cgroup_idle);
  text("dispatch", name_of(kDispatchNames, spec.dispatch),
       name_of(kDispatchNames, defaults.dispatch));
  flag("developer_mode", spec.developer_mode, defaults.developer_mode);
  number("unmanaged_threads", spec.unmanaged_threads, defaults.unmanaged_threads);
  flag("idle_spinners", spec.idle_spinners, defaults.idle_spinners);
  number("training_frames", spec.training_frames, defaults.training_frames);
  number("max_passes", spec.max_passes, defaults.max_passes);
  number("converge_after_passes", spec.converge_after_passes, defaults.converge_after_passes);
  number("commit_timeout_ms", spec.commit_timeout_ms, defaults.commit_timeout_ms);
  flag("create_pipelines", spec.create_pipelines, defaults.create_pipelines);
  flag("bind_committed", spec.bind_committed, defaults.bind_committed);
  number("before_frames", spec.before_frames, defaults.before_frames);
  flag("fold_iterations", spec.fold_iterations, defaults.fold_iterations);
  number("alternate_frames", spec.alternate_frames, defaults.alternate_frames);
  if (spec.commit_at_frame) out += fmt::format("commit_at_frame = {}\n", *spec.commit_at_frame);
}

void write_cpu(const jobs::CpuFrameSpec& spec, std::string& out) {
  out += "\n[cpu]\n";
  if (spec.workers_from_cores)
    out += "workers = \"cores\"\n";
  else
    out += fmt::format("workers = {}\n", spec.workers);
  if (spec.jobs_per_worker)
    out += fmt::format("jobs_per_worker = {}\n", *spec.jobs_per_worker);
  else
    out += fmt::format("jobs_per_frame = {}\n", spec.jobs_per_frame);
  if (spec.cpu_ms_per_worker)
    out += fmt::format("cpu_ms_per_worker = {}\n", *spec.cpu_ms_per_worker);
  else
    out += fmt::format("cpu_ms_per_frame = {}\n", spec.cpu_ms_per_frame);
  out += fmt::format("critical_jobs = {}\nwait = {}\n", spec.critical_jobs,
                     toml_string(to_string(spec.wait)));
  if (spec.wait == jobs::WaitMode::spin_then_sleep)
    out += fmt::format("spin_us = {}\n", spec.spin_us);
  if (spec.slice_ms) out += fmt::format("slice_ms = {}\n", *spec.slice_ms);
  if (spec.loop_wait != jobs::LoopWait::block)
    out +=
        fmt::format("loop_wait = {}\n", toml_string(name_of(jobs::kLoopWaitNames, spec.loop_wait)));
  if (spec.gpu_wait != jobs::LoopWait::block)
    out +=
        fmt::format("gpu_wait = {}\n", toml_string(name_of(jobs::kLoopWaitNames, spec.gpu_wait)));
  out += fmt::format("frame_period_ms = {}\nframes_in_flight = {}\n", spec.frame_period_ms,
                     spec.frames_in_flight);
  if (spec.pin_workers) out += "pin_workers = true\n";
}

std::string dependency_table(const Scenario& s, const DependencySpec& d) {
  const BarrierRequest& b = d.barrier;
  std::string out =
      fmt::format("{{ workload = {}, barrier = {}", toml_string(s.workloads[d.producer].name),
                  toml_string(to_string(b.kind)));
  if (is_split(b.kind)) out += ", split_policy = " + toml_string(to_string(b.split_policy));
  if (b.reads_output) out += fmt::format(", reads_output = {}", *b.reads_output);
  auto field = [&](const char* key, const auto& value, auto name) {
    if (value) out += fmt::format(", {} = {}", key, toml_string(name(*value)));
  };
  field("state_before", b.state_before, resource_states_name);
  field("state_after", b.state_after, resource_states_name);
  field("type", b.type, [](D3D12_BARRIER_TYPE t) { return std::string(to_string(t)); });
  field("sync_before", b.sync_before, barrier_sync_name);
  field("sync_after", b.sync_after, barrier_sync_name);
  field("access_before", b.access_before, barrier_access_name);
  field("access_after", b.access_after, barrier_access_name);
  field("layout_before", b.layout_before, barrier_layout_name);
  field("layout_after", b.layout_after, barrier_layout_name);
  if (b.subresources) {
    std::string spans;
    auto span = [&](const char* key, const std::optional<SubresourceRequest::Span>& value) {
      if (!value) return;
      spans += fmt::format("{}{} = [{}, {}]", spans.empty() ? "" : ", ", key, value->first,
                           value->count);
    };
    span("mips", b.subresources->mips);
    span("slices", b.subresources->slices);
    out += ", subresources = { " + spans + (spans.empty() ? "}" : " }");
  }
  return out + " }";
}

}  // namespace

std::string to_toml(const Scenario& s) {
  std::string out;
  out += "name = " + toml_string(s.name) + "\n";
  if (!s.description.empty()) out += "description = " + toml_string(s.description) + "\n";
  out += fmt::format("frames = {}\nwarmup_frames = {}\n", s.frames, s.warmup_frames);
  out += "barrier = " + toml_string(to_string(s.default_barrier)) + "\n";
  out += "split_policy = " + toml_string(to_string(s.default_split_policy)) + "\n";
  if (!s.timestamps) out += "timestamps = false\n";
  for (const QueueSpec& q : s.queues)
    out += fmt::format("\n[queues.{}]\ntype = {}\npriority = {}\n", toml_string(q.name),
                       toml_string(to_string(q.type)), toml_string(to_string(q.priority)));
  for (const TextureSpec& t : s.textures) {
    out += fmt::format(
        "\n[[texture]]\nname = {}\nformat = {}\nwidth = {}\nheight = {}\nmips = {}\n"
        "slices = {}\n",
        toml_string(t.name), toml_string(to_string(t.format)), t.width, t.height, t.mips, t.slices);
    if (!t.heap.empty()) out += fmt::format("heap = {}\n", toml_string(t.heap));
  }
  for (const WorkloadSpec& w : s.workloads) {
    out += fmt::format("\n[[workload]]\nname = {}\nqueue = {}\nkind = {}\n", toml_string(w.name),
                       toml_string(s.queues[w.queue].name), toml_string(to_string(w.kind)));
    const bool copy = w.kind == WorkloadKind::copy;
    // A readback's bytes are its source's, which an edit of the source may change.
    if (copy && !is_readback(w)) out += fmt::format("bytes = {}\n", w.bytes);
    if (w.target)
      out += fmt::format("target = {{ texture = {}, mip = {}, slice = {}{} }}\n",
                         toml_string(s.textures[w.target->texture].name), w.target->mip,
                         w.target->slice, w.target->discard ? ", discard = true" : "");
    // A copy has no size in groups or iterations; a readback copy depends on its source.
    if (!copy) {
      if (!w.target) out += fmt::format("groups = {}\n", w.groups);
      out += fmt::format("iterations = {}\n", w.iterations);
    }
    if (w.depends_on.empty()) continue;
    out += "depends_on = [\n";
    for (const DependencySpec& d : w.depends_on) out += "  " + dependency_table(s, d) + ",\n";
    out += "]\n";
  }
  if (s.background) write_background(*s.background, out);
  if (s.cpu) write_cpu(*s.cpu, out);
  return out;
}

}  // namespace gpuoverlap
