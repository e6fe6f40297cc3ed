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

std::vector<std::size_t> indices(const DeviceChoices& c) {
  std::vector<std::size_t> out;
  for (const DeviceChoice& d : c.devices) out.push_back(d.index);
  return out;
}

TEST(DeviceSelection, AllOrAListRunsOnSeveralDevicesInTheirOwnFolders) {
  const auto none = choose_devices(kMixed, {});
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(indices(*none), std::vector<std::size_t>{2});
  EXPECT_FALSE(none->several) << "one device, the results at the top as always";
  const auto one = choose_devices(kMixed, {"intel"});
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(indices(*one), std::vector<std::size_t>{1});
  EXPECT_FALSE(one->several);
  const auto all = choose_devices(kMixed, {"all"});
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(indices(*all), (std::vector<std::size_t>{1, 2})) << "every GPU, not lavapipe";
  EXPECT_TRUE(all->several);
  const auto software = choose_devices({kMixed[0]}, {"ALL"});
  ASSERT_TRUE(software.ok());
  EXPECT_EQ(indices(*software), std::vector<std::size_t>{0}) << "no GPU: the software device";
  EXPECT_TRUE(software->several) << "a folder per device, even of one";
  const auto list = choose_devices(kMixed, {"2,llvm"});
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(indices(*list), (std::vector<std::size_t>{2, 0})) << "in the order asked";
  EXPECT_TRUE(list->several);
}

TEST(DeviceSelection, BadDeviceListsNameTheDevicesPresent) {
  for (const std::vector<std::string>& bad :
       std::vector<std::vector<std::string>>{{"7"},
                                             {"0,7"},
                                             {"0,0"},
                                             {"2,nvidia"},
                                             {""},
                                             {"0,"},
                                             {",1"},
                                             {"all", "1"},
                                             {"nothing-like-it,1"}}) {
    const auto refused = choose_devices(kMixed, bad);
    ASSERT_FALSE(refused.ok()) << bad.front();
    EXPECT_EQ(refused.error().category, ErrorCategory::input) << bad.front();
    EXPECT_NE(refused.error().message.find("0: llvmpipe (LLVM 15), 1: Intel UHD 770, 2: NVIDIA"),
              std::string::npos)
        << refused.error().message;
  }
  EXPECT_NE(choose_devices(kMixed, {"0,0"}).error().message.find("device 0 is named twice"),
            std::string::npos);
  EXPECT_EQ(choose_devices({}, {"all"}).error().category, ErrorCategory::environment)
      << "no device at all is the machine's";
}

}  // namespace
}  // namespace gpuoverlap
