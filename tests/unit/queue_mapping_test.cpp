#include "queues/queue_mapping.h"

#include <gtest/gtest.h>

namespace gpuoverlap {
namespace {

const QueueFamilyDescription kGraphics16{true, true, 16, 64};
const QueueFamilyDescription kTransfer2{false, false, 2, 64};
const QueueFamilyDescription kCompute8{false, true, 8, 64};

TEST(QueueMapping, H100LikeDeviceGetsAComputeOnlyFamily) {
  auto m =
      map_queues({kGraphics16, kTransfer2, kCompute8}, {QueueType::direct, QueueType::compute});
  ASSERT_TRUE(m.ok());
  EXPECT_EQ((*m)[0].family_index, 0u);
  EXPECT_EQ((*m)[0].queue_index, 0u);
  EXPECT_EQ((*m)[1].family_index, 2u);
  EXPECT_EQ((*m)[1].queue_index, 0u);
  EXPECT_EQ((*m)[1].shares_with, -1);
}

TEST(QueueMapping, LavapipeLikeDeviceSharesTheOneQueue) {
  auto m = map_queues({{true, true, 1, 64}}, {QueueType::direct, QueueType::compute});
  ASSERT_TRUE(m.ok());
  EXPECT_EQ((*m)[1].family_index, 0u);
  EXPECT_EQ((*m)[1].queue_index, 0u);
  EXPECT_EQ((*m)[1].shares_with, 0);
}

TEST(QueueMapping, ComputeFallsBackToAnotherGraphicsQueue) {
  auto m = map_queues({{true, true, 2, 64}}, {QueueType::direct, QueueType::compute});
  ASSERT_TRUE(m.ok());
  EXPECT_EQ((*m)[1].family_index, 0u);
  EXPECT_EQ((*m)[1].queue_index, 1u);
  EXPECT_EQ((*m)[1].shares_with, -1);
}

TEST(QueueMapping, DirectIsMappedFirstWhateverTheOrder) {
  auto m = map_queues({{true, true, 1, 64}}, {QueueType::compute, QueueType::direct});
  ASSERT_TRUE(m.ok());
  EXPECT_EQ((*m)[1].shares_with, -1);  // direct owns the queue
  EXPECT_EQ((*m)[0].shares_with, 1);   // compute shares it
}

TEST(QueueMapping, ExtraComputeQueuesSpillToTheGraphicsFamily) {
  auto m = map_queues({kGraphics16, {false, true, 1, 64}},
                      {QueueType::direct, QueueType::compute, QueueType::compute});
  ASSERT_TRUE(m.ok());
  EXPECT_EQ((*m)[1].family_index, 1u);
  // The compute family is full, so the second compute queue takes a graphics-family queue.
  EXPECT_EQ((*m)[2].family_index, 0u);
  EXPECT_EQ((*m)[2].queue_index, 1u);
}

TEST(QueueMapping, ADeviceWithoutGraphicsAndComputeIsRejected) {
  auto m = map_queues({kCompute8}, {QueueType::direct});
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().message.find("GRAPHICS and COMPUTE"), std::string::npos);
}

}  // namespace
}  // namespace gpuoverlap

namespace gpuoverlap {
namespace {

TEST(QueueModel, NamesRoundTripAndMapToD3D12) {
  for (QueueType t : {QueueType::direct, QueueType::compute})
    EXPECT_EQ(parse_queue_type(to_string(t)), t);
  for (QueuePriority p : {QueuePriority::normal, QueuePriority::high, QueuePriority::realtime})
    EXPECT_EQ(parse_queue_priority(to_string(p)), p);
  EXPECT_FALSE(parse_queue_type("copy").has_value());
  EXPECT_FALSE(parse_queue_priority("HIGH").has_value());  // names are lower case
  EXPECT_EQ(to_d3d12(QueueType::direct), D3D12_COMMAND_LIST_TYPE_DIRECT);
  EXPECT_EQ(to_d3d12(QueueType::compute), D3D12_COMMAND_LIST_TYPE_COMPUTE);
  EXPECT_EQ(to_d3d12(QueuePriority::normal), D3D12_COMMAND_QUEUE_PRIORITY_NORMAL);
  EXPECT_EQ(to_d3d12(QueuePriority::high), D3D12_COMMAND_QUEUE_PRIORITY_HIGH);
  EXPECT_EQ(to_d3d12(QueuePriority::realtime), D3D12_COMMAND_QUEUE_PRIORITY_GLOBAL_REALTIME);
}

}  // namespace
}  // namespace gpuoverlap
