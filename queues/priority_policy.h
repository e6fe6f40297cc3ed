// The queue priority policy, API neutral: which priority each device queue family is created
// with when scenario queues ask for NORMAL, HIGH or REALTIME, and what happens when the
// device or the driver cannot give one. Strict by default: any priority not granted as asked
// fails the scenario before it runs, naming the queue and the reason; with
// --priority-fallback the run goes on at the priority granted and every difference is a note
// in meta.json ("priority_notes"), so no result silently claims a priority it did not have.
//
// A backend calls plan_priorities once, creates its device with the families' priorities,
// and on a refusal from the driver calls lower_after_refusal and tries again.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/result.h"
#include "queues/queue_mapping.h"
#include "queues/queue_model.h"

namespace gpuoverlap {

// One scenario queue's request.
struct PriorityAsk {
  std::string name;
  QueuePriority priority = QueuePriority::normal;
};

struct PriorityPlan {
  // Per device family (index = family): the priority to create it with. A family's queues
  // share one global priority (Vulkan's rule), so it is the highest any of its queues asks
  // for. Families no scenario queue uses stay normal.
  std::vector<QueuePriority> family_priority;
  std::vector<std::string> notes;  // every priority not granted as asked, and why

  // True when a priority above normal is still to be requested.
  bool requests_priority() const;
  // The priority each scenario queue runs at, given `mapping` (one entry per queue).
  std::vector<QueuePriority> granted(const std::vector<MappedQueue>& mapping) const;
};

// `asks` and `mapping` have one entry per scenario queue; `families` is the device's family
// count. `device_can_request` is false when the API offers no priorities above normal (no
// VK_KHR/EXT_global_priority): `why_not` then says so for the messages. An Error (strict
// mode) names the first queue that cannot get its priority.
Result<PriorityPlan> plan_priorities(const std::vector<PriorityAsk>& asks,
                                     const std::vector<MappedQueue>& mapping, std::size_t families,
                                     bool device_can_request, const std::string& why_not,
                                     bool fallback);

// The driver refused the plan's priorities with `refusal` (its message a hint at why, its
// code the API's). With fallback, every family is lowered one step (REALTIME to HIGH, HIGH to
// NORMAL) and a note records the refusal; the caller tries again. An Error, carrying the
// refusal's code, when fallback is off or nothing is left to lower.
Status lower_after_refusal(PriorityPlan& plan, const Error& refusal, bool fallback);

}  // namespace gpuoverlap
