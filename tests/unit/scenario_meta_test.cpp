// meta.json read once into ScenarioMeta (analysis/scenario_meta.h): the writer's members land
// in typed fields, and a folder from anywhere (wrong types, nulls, missing objects) reads as
// absent, never throws.
#include "analysis/scenario_meta.h"

#include <gtest/gtest.h>

namespace gpuoverlap {
namespace {

TEST(ScenarioMeta, ReadsTheMembersTheWriterWrites) {
  const ScenarioMeta m = read_scenario_meta(nlohmann::json::parse(R"({
    "scenario": {"name": "s", "description": "two | queues", "default_barrier": "enhanced",
                 "queues": [{"name": "direct"}],
                 "workloads": [{"name": "A", "target": {"texture": "t", "discard": true},
                                "depends_on": [{"workload": "B", "barrier": "split"}]}]},
    "failure": {"message": "device lost"},
    "queues": [{"name": "async", "type": "compute", "family": 2, "family_flags": "COMPUTE",
                "queue_index": 0, "shares_queue_of": "direct", "priority_requested": "high",
                "priority_granted": "normal"}],
    "priority_notes": ["refused", 3],
    "settings": {"frames": 40, "warmup_frames": 5, "timestamp_queries": false},
    "clock_agreement": {"tolerance": "5 us"},
    "clocks": {"shader_clock": {"verification": {"verdict": "verified"}}},
    "device": {"api": "D3D12", "name": "GPU", "vendor_id": 4318, "device_id": 8995,
               "runtime": "Wine", "uuid": "u"},
    "host": {"kernel": "Linux", "cpu_model": "Xeon", "logical_cpus": 16, "usable_cpus": 15},
    "tool": {"git_revision": "abc"},
    "command_line": "gpuoverlap run", "started_at": "2026-11-29T08:00:00Z",
    "sizes": {"profile": "cpu-device", "frames": 20},
    "cpu": {"frame_period_ms": 16.5},
    "preemption": {"spec": {"load": "graphics", "period_ms": 10, "priority": "high",
                            "process": "separate"},
                   "priority_granted": "high", "calibrated": true,
                   "load_sizes": [{"description": "1024 groups"}]}})"));
  EXPECT_EQ(m.description, "two | queues");
  EXPECT_EQ(m.default_barrier, "enhanced");
  EXPECT_TRUE(m.failed);
  EXPECT_EQ(m.failure, "device lost");
  ASSERT_EQ(m.queues.size(), 1u);
  EXPECT_EQ(m.queues[0].name, "async");
  EXPECT_EQ(m.queues[0].queue_type, QueueType::compute);
  EXPECT_EQ(m.queues[0].family, "2") << "a number shows as its digits";
  EXPECT_EQ(m.queues[0].shares_queue_of, "direct");
  EXPECT_EQ(m.priority_notes, std::vector<std::string>{"refused"});
  EXPECT_EQ(m.frames, "40");
  EXPECT_FALSE(m.timestamp_queries);
  EXPECT_EQ(m.clock_tolerance, "5 us");
  EXPECT_EQ(m.shader_clock_verdict, "verified");
  EXPECT_FALSE(m.shader_clock_reason);
  EXPECT_EQ(m.device.vendor_number, 4318);
  EXPECT_EQ(m.device.vendor_id, "4318");
  EXPECT_EQ(m.host.logical_cpu_count, 16);
  EXPECT_EQ(m.git_revision, "abc");
  EXPECT_EQ(m.sizes.profile, "cpu-device");
  EXPECT_EQ(m.frame_period_ms, 16.5);
  ASSERT_TRUE(m.preemption);
  EXPECT_EQ(m.preemption->load, "graphics");
  EXPECT_EQ(m.preemption->period_ms_number, 10.0);
  EXPECT_EQ(m.preemption->spec_process, "separate");
  EXPECT_TRUE(m.preemption->calibrated);
  ASSERT_EQ(m.preemption->load_sizes.size(), 1u);
  EXPECT_EQ(m.preemption->load_sizes[0], "1024 groups");
  EXPECT_EQ(api_of(m), "D3D12");
  EXPECT_EQ(platform_of(m), "D3D12 ? on GPU, runtime Wine, host Linux");
  // The work without how it is reached: the target's discard goes, producers by name.
  EXPECT_EQ(m.work["workloads"][0]["depends_on"], nlohmann::json::array({"B"}));
  EXPECT_FALSE(m.work["workloads"][0]["target"].contains("discard"));
  EXPECT_EQ(m.work["queues"][0]["name"], "direct");
}

TEST(ScenarioMeta, AnyOtherShapeReadsAsAbsent) {
  for (const char* text :
       {"null", "[]", "7", R"({"device": 3, "host": [], "queues": {"x": 1}, "settings": 1})",
        R"({"queues": [null, 5, {"name": 7, "type": "sideways"}], "failure": null})",
        R"({"scenario": {"workloads": [3]}, "cpu": {"frame_period_ms": -1},
            "preemption": {"spec": [], "calibrated": "yes", "load_sizes": 2}})"}) {
    const ScenarioMeta m = read_scenario_meta(nlohmann::json::parse(text));
    EXPECT_FALSE(m.failed) << text;
    EXPECT_TRUE(m.timestamp_queries) << text << ": older results had them on";
    EXPECT_FALSE(m.device.name) << text;
    EXPECT_FALSE(m.frame_period_ms) << text;
    EXPECT_TRUE(m.work.is_null()) << text;
    EXPECT_EQ(api_of(m), "Vulkan") << text << ": results before the api key are Vulkan's";
    EXPECT_EQ(platform_of(m), "Vulkan ? on ?, driver ? ?, host ?") << text;
    for (const MetaQueue& q : m.queues) {
      EXPECT_FALSE(q.name) << text << ": a number names no lane";
      EXPECT_FALSE(q.queue_type) << text;
    }
    if (m.preemption) {
      EXPECT_FALSE(m.preemption->calibrated) << text;
      EXPECT_TRUE(m.preemption->load_sizes.empty()) << text;
    }
  }
}

}  // namespace
}  // namespace gpuoverlap
