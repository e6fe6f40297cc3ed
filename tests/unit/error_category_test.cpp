// An Error's category and the exit status it decides (app/exit_status.h): the category is set
// where the failure is understood and survives every context added on the way up.
#include <gtest/gtest.h>

#include <filesystem>

#include "app/exit_status.h"
#include "core/atomic_file.h"
#include "core/result.h"
#include "queues/device_selection.h"
#include "temp_dir.h"

namespace gpuoverlap {
namespace {

namespace fs = std::filesystem;
using commands::exit_status_of;

TEST(ErrorCategory, EachCategoryHasTheDocumentedExitStatus) {
  EXPECT_EQ(exit_status_of(ErrorCategory::input), 2);
  EXPECT_EQ(exit_status_of(ErrorCategory::environment), 3);
  EXPECT_EQ(exit_status_of(make_error("bad file")), commands::kExitBadInput);
  EXPECT_EQ(exit_status_of(make_error("no driver", ErrorCategory::environment)),
            commands::kExitEnvironment);
}

TEST(ErrorCategory, AnApiFailureIsTheEnvironmentsAnyOtherTheInputs) {
  EXPECT_EQ(make_error("scenario.toml:3: unknown key").category, ErrorCategory::input);
  const Error lost{"vkQueueSubmit failed: VK_ERROR_DEVICE_LOST", -4, "VK_ERROR_DEVICE_LOST"};
  EXPECT_EQ(lost.category, ErrorCategory::environment);
  EXPECT_EQ(exit_status_of(lost), commands::kExitEnvironment);
  const Error tagged{"refused", -1000174001, "VK_ERROR_NOT_PERMITTED_KHR", ErrorCategory::input};
  EXPECT_EQ(tagged.category, ErrorCategory::input);
}

TEST(ErrorCategory, WithContextKeepsTheCategoryAndTheApiCode) {
  const Error written = make_error("cannot write x.csv", ErrorCategory::environment)
                            .with_context("study s: ")
                            .with_context("scenario 'a': ");
  EXPECT_EQ(written.message, "scenario 'a': study s: cannot write x.csv");
  EXPECT_EQ(written.category, ErrorCategory::environment);
  const Error input = make_error("line 3: bad").with_context("a.toml: ");
  EXPECT_EQ(input.category, ErrorCategory::input);
  const Error lost =
      Error{"fence: VK_ERROR_DEVICE_LOST", -4, "VK_ERROR_DEVICE_LOST"}.with_context("frame 3: ");
  EXPECT_EQ(lost.category, ErrorCategory::environment);
  EXPECT_EQ(lost.api_code, -4);
  EXPECT_EQ(lost.api_code_name, "VK_ERROR_DEVICE_LOST");
}

TEST(ErrorCategory, WithCategoryRetagsAndKeepsTheRest) {
  const Error e = Error{"x", -4, "VK_ERROR_DEVICE_LOST"}.with_category(ErrorCategory::input);
  EXPECT_EQ(e.category, ErrorCategory::input);
  EXPECT_EQ(e.message, "x");
  EXPECT_EQ(e.api_code, -4);
}

Status propagates(const Error& e) {
  GPUOVERLAP_TRY(Status(e));
  return ok_status();
}

TEST(ErrorCategory, TryPropagatesTheCategory) {
  EXPECT_EQ(propagates(make_error("x", ErrorCategory::environment)).error().category,
            ErrorCategory::environment);
  EXPECT_EQ(propagates(make_error("x")).error().category, ErrorCategory::input);
}

// No device at all is the machine's; a --device that names none is the user's.
TEST(ErrorCategory, DeviceChoiceTagsWhoseFailureItIs) {
  EXPECT_EQ(choose_device({}, "").error().category, ErrorCategory::environment);
  const std::vector<DeviceCandidate> one = {{"llvmpipe (LLVM 15)", DeviceClass::cpu}};
  EXPECT_EQ(choose_device(one, "7").error().category, ErrorCategory::input);
  EXPECT_EQ(choose_device(one, "radeon").error().category, ErrorCategory::input);
}

using ErrorCategoryFiles = TempDir;

// An output file named on the command line and refused up front is bad input; results that
// cannot be written once measured are the environment's.
TEST_F(ErrorCategoryFiles, AnOutputRefusedUpFrontIsInputAFailedWriteIsEnvironment) {
  fs::create_directories(dir_ / "a-folder");
  EXPECT_EQ(check_output_file(dir_ / "a-folder").error().category, ErrorCategory::input);
  EXPECT_EQ(write_file_atomically(dir_ / "a-folder", "x").error().category,
            ErrorCategory::environment);
  EXPECT_EQ(write_file_atomically(dir_ / "missing" / "x.csv", "x").error().category,
            ErrorCategory::environment);
}

}  // namespace
}  // namespace gpuoverlap
