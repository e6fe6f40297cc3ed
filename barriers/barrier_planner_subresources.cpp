// A dependency's subresources on a texture: the range it names, checked against the output,
// the tracked subresources it covers (in one state), and a split barrier's range left undrawn.
#include <string>

#include "barriers/barrier_planner_internal.h"
#include "barriers/d3d12_names.h"

namespace gpuoverlap::barrier_planning {

// A range is checked against the output it names: buffers have one subresource, a GLOBAL
// barrier names no resource, and a range must lie inside the texture and cover the
// subresource the producer wrote (mip 0, slice 0 of a render target), or it orders nothing.
void Planner::resolve_subresources(const SubresourceRequest& q, DependencyPlan& out) {
  if (out.resource == ResourceKind::buffer) {
    error("subresource-buffer",
          "subresources name mips and array slices of a texture; the producer writes a buffer, "
          "which has one subresource");
    return;
  }
  if (q == SubresourceRequest{} && !out.texture) return;  // all of them, as without the key
  const SubresourceRequest::Span mips =
      q.mips.value_or(SubresourceRequest::Span{0, out.extent.mips});
  const SubresourceRequest::Span slices =
      q.slices.value_or(SubresourceRequest::Span{0, out.extent.slices});
  auto outside = [](const SubresourceRequest::Span& span, std::uint32_t size) {
    return span.count == 0 || span.first >= size || span.count > size - span.first;
  };
  const auto span_text = [](const SubresourceRequest::Span& span) {
    return "[" + std::to_string(span.first) + ", " + std::to_string(span.count) + "]";
  };
  if (outside(mips, out.extent.mips) || outside(slices, out.extent.slices)) {
    error("subresource-range", "subresources mips " + span_text(mips) + ", slices " +
                                   span_text(slices) + " lie outside the texture (" +
                                   std::to_string(out.extent.mips) + " mip(s), " +
                                   std::to_string(out.extent.slices) + " slice(s))");
    return;
  }
  const SubresourceRange range{mips.first, mips.count, slices.first, slices.count};
  const PlannerWorkload& producer = workloads_[out.producer];
  const std::uint32_t drawn_mip = producer.target ? producer.target->mip : 0;
  const std::uint32_t drawn_slice = producer.target ? producer.target->slice : 0;
  if (!range.contains(drawn_mip, drawn_slice)) {
    error("subresource-uncovered", "subresources mips " + span_text(mips) + ", slices " +
                                       span_text(slices) + " leave out mip " +
                                       std::to_string(drawn_mip) + ", slice " +
                                       std::to_string(drawn_slice) + ", which '" + producer.name +
                                       "' writes: the barrier would not order its write");
    return;
  }
  out.subresources = range;
}

// The tracked subresources of `out`'s range on its declared texture, after checking that they
// stand in one state (a barrier names one StateBefore or LayoutBefore for all of them).
std::vector<TrackedResource*> Planner::covered_subresources(const DependencyPlan& out) {
  std::vector<TrackedResource*> covered;
  const SubresourceRange range =
      out.subresources.value_or(SubresourceRange{0, out.extent.mips, 0, out.extent.slices});
  auto& texture = subresources_[*out.texture];
  for (std::uint32_t slice = range.first_slice; slice < range.first_slice + range.slice_count;
       ++slice)
    for (std::uint32_t mip = range.first_mip; mip < range.first_mip + range.mip_count; ++mip) {
      TrackedResource* sub = &texture[subresource_index(mip, slice, out.extent.mips)];
      if (!covered.empty() &&
          (sub->state != covered.front()->state || sub->layout != covered.front()->layout)) {
        error("subresource-states",
              "the subresources cover mip " + std::to_string(mip) + ", slice " +
                  std::to_string(slice) + " in layout " + barrier_layout_name(sub->layout) +
                  " and others in " + barrier_layout_name(covered.front()->layout) +
                  "; one barrier has one layout before: name a range per layout");
        return {covered.front()};
      }
      covered.push_back(sub);
    }
  return covered;
}

// A split barrier's range is in transition from its BEGIN half (after the producer) to its
// END half (before the consumer): a draw in between may not render into it.
void Planner::check_split_range(const DependencyPlan& out) {
  const SubresourceRange range =
      out.subresources.value_or(SubresourceRange{0, out.extent.mips, 0, out.extent.slices});
  const std::size_t begin = workloads_[out.producer].position;
  const std::size_t end = workloads_[out.consumer].position;
  for (const std::size_t w : writers_) {
    const PlannerWorkload& writer = workloads_[w];
    const TextureTarget& target = *writer.target;
    if (target.texture != *out.texture || writer.position <= begin || writer.position >= end)
      continue;
    if (range.contains(target.mip, target.slice))
      error("split-range-draw",
            "'" + writer.name + "' writes mip " + std::to_string(target.mip) + ", slice " +
                std::to_string(target.slice) +
                " between this split barrier's BEGIN and END, while the range is in "
                "transition; leave that subresource out of the range or do not split");
  }
}

}  // namespace gpuoverlap::barrier_planning
