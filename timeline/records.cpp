#include "timeline/records.h"

namespace gpuoverlap {

std::string_view to_string(RecordStatus status) { return name_of(kRecordStatusNames, status); }

std::string_view to_string(Clock clock) { return name_of(kClockNames, clock); }

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
