#include "queues/priority_policy.h"

#include <algorithm>

namespace gpuoverlap {
namespace {

std::string name_of(QueuePriority priority) { return std::string(to_string(priority)); }

}  // namespace

bool PriorityPlan::requests_priority() const {
  return std::any_of(family_priority.begin(), family_priority.end(),
                     [](QueuePriority p) { return p != QueuePriority::normal; });
}

std::vector<QueuePriority> PriorityPlan::granted(const std::vector<MappedQueue>& mapping) const {
  std::vector<QueuePriority> out;
  for (const MappedQueue& m : mapping)
    out.push_back(m.family_index < family_priority.size() ? family_priority[m.family_index]
                                                          : QueuePriority::normal);
  return out;
}

Result<PriorityPlan> plan_priorities(const std::vector<PriorityAsk>& asks,
                                     const std::vector<MappedQueue>& mapping, std::size_t families,
                                     bool device_can_request, const std::string& why_not,
                                     bool fallback) {
  if (asks.size() != mapping.size())
    return make_error("priority policy: one mapping per queue expected");
  PriorityPlan plan;
  plan.family_priority.assign(families, QueuePriority::normal);
  // One global priority per family: the highest any queue of its own there asks for. A queue
  // sharing another's device queue has no say: it runs at that queue's priority.
  for (std::size_t q = 0; q < asks.size(); ++q) {
    if (mapping[q].family_index >= families)
      return make_error("priority policy: queue '" + asks[q].name + "' maps to no family");
    if (mapping[q].shares_with >= 0) continue;
    QueuePriority& f = plan.family_priority[mapping[q].family_index];
    f = std::max(f, asks[q].priority);
  }

  bool dropped_for_device = false;
  if (plan.requests_priority() && !device_can_request) {
    if (!fallback)
      return make_error(why_not + "; pass --priority-fallback to run at normal priority");
    plan.notes.push_back(why_not + "; ran at normal");
    std::fill(plan.family_priority.begin(), plan.family_priority.end(), QueuePriority::normal);
    dropped_for_device = true;
  }

  // Queues whose family cannot give them their priority: a shared device queue, or one global
  // priority per family. (A queue of its own whose priority was dropped for the device is
  // covered by the note above.)
  for (std::size_t q = 0; q < asks.size(); ++q) {
    const QueuePriority family = plan.family_priority[mapping[q].family_index];
    if (asks[q].priority == family) continue;
    const bool shared = mapping[q].shares_with >= 0;
    if (dropped_for_device && !shared) continue;
    const std::string asked = "queue '" + asks[q].name + "' asked for " + name_of(asks[q].priority);
    if (shared) {
      const std::string& owner = asks[static_cast<std::size_t>(mapping[q].shares_with)].name;
      if (!fallback)
        return make_error(asked + " but has to share the device queue of '" + owner +
                          "' (the device has too few queues); pass --priority-fallback to run "
                          "anyway");
      plan.notes.push_back(asked + " but shares the device queue of '" + owner +
                           "' (too few device queues), which runs at " + name_of(family));
      continue;
    }
    const std::string note = asked + " but shares queue family " +
                             std::to_string(mapping[q].family_index) +
                             " (one global priority per family) with a queue at " + name_of(family);
    if (!fallback) return make_error(note + "; pass --priority-fallback to run anyway");
    plan.notes.push_back(note);
  }
  return plan;
}

Status lower_after_refusal(PriorityPlan& plan, const Error& refusal, bool fallback) {
  std::string asked;
  for (QueuePriority p : plan.family_priority)
    if (p != QueuePriority::normal) asked += (asked.empty() ? "" : ", ") + name_of(p);
  const std::string code = refusal.api_code_name.empty() ? "refused" : refusal.api_code_name;
  const std::string note = "the driver refused queue priority " + asked + " (" + code +
                           (refusal.message.empty() ? "" : "; " + refusal.message) + ")";
  if (!fallback)
    return Error{note + "; pass --priority-fallback to run at the priority granted",
                 refusal.api_code, refusal.api_code_name};
  if (!plan.requests_priority())
    return Error{note + ", and there is no lower priority to try", refusal.api_code,
                 refusal.api_code_name};
  plan.notes.push_back(note);
  for (QueuePriority& p : plan.family_priority)
    p = p == QueuePriority::realtime ? QueuePriority::high : QueuePriority::normal;
  return ok_status();
}

}  // namespace gpuoverlap
