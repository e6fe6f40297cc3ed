// The records and results a load process sends its parent, and their merge into the parent's
// timeline: the portable half of load_process.h (the process management is POSIX's,
// load_process.cpp).
#include <algorithm>
#include <string>
#include <vector>

#include "preemption/load_process.h"

namespace gpuoverlap::preemption {

nlohmann::json records_to_json(const std::vector<WorkloadFrameRecord>& records) {
  nlohmann::json out = nlohmann::json::array();
  for (const WorkloadFrameRecord& r : records) {
    nlohmann::json j = {{"frame", r.frame},
                        {"workload", r.workload},
                        {"t0", r.frame_t0_us},
                        {"dev", r.calibration_deviation_us},
                        {"status", to_string(r.status)}};
    auto put = [&](const char* key, const std::optional<double>& v) {
      if (v) j[key] = *v;
    };
    put("poll_start", r.poll_start_us);
    put("poll_end", r.poll_end_us);
    put("ts_start", r.ts_start_us);
    put("ts_end", r.ts_end_us);
    put("clk_start", r.clk_start_us);
    put("clk_end", r.clk_end_us);
    if (r.clk_start_ticks) j["clk_start_ticks"] = *r.clk_start_ticks;
    if (r.clk_end_ticks) j["clk_end_ticks"] = *r.clk_end_ticks;
    out.push_back(j);
  }
  return out;
}

Result<std::vector<WorkloadFrameRecord>> records_from_json(const nlohmann::json& json) {
  std::vector<WorkloadFrameRecord> out;
  try {
    for (const nlohmann::json& j : json) {
      WorkloadFrameRecord r;
      r.frame = j.at("frame").get<std::uint32_t>();
      r.workload = j.at("workload").get<std::size_t>();
      r.frame_t0_us = j.at("t0").get<double>();
      r.calibration_deviation_us = j.at("dev").get<double>();
      const std::string status = j.at("status").get<std::string>();
      bool known = false;
      for (RecordStatus s : {RecordStatus::ok, RecordStatus::timeout, RecordStatus::device_lost,
                             RecordStatus::gpu_error})
        if (to_string(s) == status) {
          r.status = s;
          known = true;
        }
      if (!known) return make_error("unknown record status '" + status + "'");
      auto get = [&](const char* key, std::optional<double>& v) {
        if (j.contains(key)) v = j[key].get<double>();
      };
      get("poll_start", r.poll_start_us);
      get("poll_end", r.poll_end_us);
      get("ts_start", r.ts_start_us);
      get("ts_end", r.ts_end_us);
      get("clk_start", r.clk_start_us);
      get("clk_end", r.clk_end_us);
      if (j.contains("clk_start_ticks"))
        r.clk_start_ticks = j["clk_start_ticks"].get<std::uint64_t>();
      if (j.contains("clk_end_ticks")) r.clk_end_ticks = j["clk_end_ticks"].get<std::uint64_t>();
      out.push_back(r);
    }
  } catch (const nlohmann::json::exception& e) {
    return make_error(std::string("load process records: ") + e.what());
  }
  return out;
}

nlohmann::json load_process_result(const ScenarioTimeline& t) {
  return {{"pid", static_cast<std::int64_t>(getpid())},
          {"time_origin_ns", t.time_origin_ns},
          {"records", records_to_json(t.records)},
          {"run", t.preemption ? to_json(*t.preemption) : nlohmann::json()},
          {"meta", t.meta},
          {"failure", t.failure ? t.failure->message : ""}};
}

Status merge_load_process(ScenarioTimeline& timeline, const nlohmann::json& result) {
  try {
    auto records = records_from_json(result.at("records"));
    if (!records) return records.error();
    const double shift_us = static_cast<double>(result.at("time_origin_ns").get<std::int64_t>() -
                                                timeline.time_origin_ns) /
                            1000.0;
    for (WorkloadFrameRecord& r : *records) {
      r.frame_t0_us += shift_us;
      timeline.records.push_back(r);
    }
    // The load's facts are the child's; the urgent queue's priority and the process facts
    // stay the parent's.
    if (!result.at("run").is_null()) {
      auto child = run_info_from_json(result["run"]);
      if (!child) return child.error();
      PreemptionRunInfo& info = *timeline.preemption;
      info.load_sizes = child->load_sizes;
      info.calibration = child->calibration;
      info.calibrated = child->calibrated;
      info.calibration_note = child->calibration_note;
      info.baseline_loads = child->baseline_loads;
    }
    timeline.meta["load_process"] = result.at("meta");
    const std::string failure = result.at("failure").get<std::string>();
    if (!failure.empty()) timeline.meta["load_process"]["failure"] = failure;
  } catch (const nlohmann::json::exception& e) {
    return make_error(std::string("the load process's result: ") + e.what());
  }
  return ok_status();
}

std::optional<Result<nlohmann::json>> take_tagged_line(std::string& buffer, std::string_view tag) {
  const std::string prefix = std::string(tag) + " ";
  for (std::size_t newline; (newline = buffer.find('\n')) != std::string::npos;) {
    std::string line = buffer.substr(0, newline);
    buffer.erase(0, newline + 1);
    if (!line.empty() && line.back() == '\r') line.pop_back();  // a Windows console's line end
    if (line.rfind("failed ", 0) == 0) {
      std::string reason = line.substr(7);
      try {
        reason = nlohmann::json::parse(reason).get<std::string>();
      } catch (const nlohmann::json::exception&) {
      }
      return Result<nlohmann::json>(make_error("the load process failed: " + reason));
    }
    if (line.rfind(prefix, 0) != 0) continue;
    try {
      return Result<nlohmann::json>(nlohmann::json::parse(line.substr(prefix.size())));
    } catch (const nlohmann::json::exception& e) {
      return Result<nlohmann::json>(make_error("the load process sent a malformed '" +
                                               std::string(tag) + "' line: " + e.what()));
    }
  }
  return std::nullopt;
}

}  // namespace gpuoverlap::preemption
