#include "timeline/records.h"

namespace gpuoverlap {

std::string_view to_string(RecordStatus status) { return name_of(kRecordStatusNames, status); }

std::optional<double> start_on(const WorkloadFrameRecord& r, std::string_view clock) {
  if (clock == "poll") return r.poll_start_us;
  if (clock == "ts") return r.ts_start_us;
  if (clock == "clk") return r.clk_start_us;
  return std::nullopt;
}

std::optional<double> end_on(const WorkloadFrameRecord& r, std::string_view clock) {
  if (clock == "poll") return r.poll_end_us;
  if (clock == "ts") return r.ts_end_us;
  if (clock == "clk") return r.clk_end_us;
  return std::nullopt;
}

void annotate_background_activity(ScenarioTimeline& timeline) {
  for (FrameRecord& f : timeline.frames) {
    const double start_ns = static_cast<double>(timeline.time_origin_ns) + f.cpu_start_us * 1e3;
    const double end_ns = start_ns + f.cpu_frame_us * 1e3;
    f.bg_managed = f.bg_boosted = f.bg_unmanaged = 0;
    for (const background::BackgroundTaskRecord& t : timeline.background_tasks) {
      if (t.start_ns == 0) continue;  // cancelled before it ran
      if (static_cast<double>(t.start_ns) >= end_ns || static_cast<double>(t.finish_ns) <= start_ns)
        continue;
      if (!t.managed) {
        ++f.bg_unmanaged;
      } else {
        ++f.bg_managed;
        if (t.boosted) ++f.bg_boosted;
      }
    }
  }
}

}  // namespace gpuoverlap
