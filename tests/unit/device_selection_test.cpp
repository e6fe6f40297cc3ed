#include "queues/device_selection.h"

#include <gtest/gtest.h>

namespace gpuoverlap {
namespace {

const std::vector<DeviceCandidate> kMixed = {{"llvmpipe (LLVM 15)", DeviceClass::cpu},
                                             {"Intel UHD 770", DeviceClass::integrated_gpu},
                                             {"NVIDIA H100 80GB HBM3", DeviceClass::discrete_gpu}};

TEST(DeviceSelection, DefaultPrefersDiscreteThenIntegratedThenSoftware) {
  auto c = choose_device(kMixed, "");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->index, 2u);
  EXPECT_EQ(c->reason, "first discrete GPU");
  c = choose_device({kMixed[0], kMixed[1]}, "");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->index, 1u);
  c = choose_device({kMixed[0]}, "");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->index, 0u);
  EXPECT_NE(c->reason.find("no GPU"), std::string::npos);
}

TEST(DeviceSelection, ByIndexAndByCaseInsensitiveSubstring) {
  auto c = choose_device(kMixed, "0");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->index, 0u);
  c = choose_device(kMixed, "h100");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->index, 2u);
}

TEST(DeviceSelection, BadRequestsListTheDevices) {
  auto c = choose_device(kMixed, "7");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message.find("2: NVIDIA H100"), std::string::npos);
  c = choose_device(kMixed, "radeon");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message.find("matches no device"), std::string::npos);
  c = choose_device(kMixed, "l");  // llvmpipe, Intel ... ambiguous
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message.find("several"), std::string::npos);
  EXPECT_FALSE(choose_device({}, "").ok());
}

}  // namespace
}  // namespace gpuoverlap
