// Two Vulkan devices on any machine with lavapipe: the loader is given lavapipe's ICD twice, as a
// host with two GPUs of one model would list them. For the tests of runs on several devices.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "results_tools.h"
#include "run_binary.h"

namespace gpuoverlap {

// A path in the temporary folder, this process's and `suite`'s own.
inline std::filesystem::path scratch_path(const std::string& suite, const std::string& name) {
  return std::filesystem::temp_directory_path() /
         ("gpuoverlap-" + suite + "-" + std::to_string(::getpid()) + "-" + name);
}

// The file parsed, or a discarded value where it is missing or not JSON (the test's assertion
// on it then fails and says where).
inline nlohmann::json read_json_or_discarded(const std::filesystem::path& file) {
  std::ifstream in(file);
  return nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
}

// The second copy of lavapipe's ICD file, for as long as the object lives.
class TwoLavapipes {
 public:
  explicit TwoLavapipes(const std::string& suite) : second_icd_(scratch_path(suite, "lvp2.json")) {
    std::filesystem::copy_file(kIcd, second_icd_,
                               std::filesystem::copy_options::overwrite_existing);
  }
  ~TwoLavapipes() {
    std::error_code ignored;
    std::filesystem::remove(second_icd_, ignored);
  }
  TwoLavapipes(const TwoLavapipes&) = delete;
  TwoLavapipes& operator=(const TwoLavapipes&) = delete;

  // gpuoverlap with `arguments`, seeing two devices.
  CommandResult run(const std::string& arguments) const {
    return run_command(std::string("VK_ICD_FILENAMES=") + kIcd + ":" + second_icd_.string() + " " +
                       GPUOVERLAP_BINARY + " " + arguments);
  }

 private:
  static constexpr const char* kIcd = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json";
  std::filesystem::path second_icd_;
};

// `compare` of a run's two devices (gpu0 against gpu1): it reads both, whatever it finds.
inline CommandResult expect_devices_compared(const std::filesystem::path& run) {
  const auto compared =
      run_gpuoverlap("compare " + (run / "gpu0").string() + " " + (run / "gpu1").string());
  EXPECT_TRUE(compared.exit_code == 0 || compared.exit_code == 1) << compared.output;
  return compared;
}

// plot.py on a run of several devices, into a scratch folder of `suite`'s: it draws `drawn`
// (a device's folder and a scenario), among the rest.
inline void expect_devices_plotted(const std::filesystem::path& run, const std::string& suite,
                                   const std::string& drawn) {
  const std::filesystem::path plots = scratch_path(suite, "plots");
  const auto plotted = run_command("/usr/bin/python3 " + std::string(GPUOVERLAP_SOURCE_DIR) +
                                   "/plots/plot.py " + run.string() + " --out " + plots.string());
  EXPECT_EQ(plotted.exit_code, 0) << plotted.output;
  EXPECT_TRUE(std::filesystem::exists(plots / drawn)) << plotted.output;
  std::filesystem::remove_all(plots);
}

// The viewer's screenshot of `scenario` (a device's folder and a scenario) of a run of several
// devices, taken into a scratch file of `suite`'s.
inline void expect_devices_viewed(const std::filesystem::path& run, const std::string& suite,
                                  const std::string& scenario) {
  const std::filesystem::path shot = scratch_path(suite, "view.png");
  const auto viewed = run_gpuoverlap_on_display("view " + run.string() + " --scenario " + scenario +
                                                " --screenshot " + shot.string());
  EXPECT_EQ(viewed.exit_code, 0) << viewed.output;
  EXPECT_TRUE(std::filesystem::exists(shot));
  std::filesystem::remove(shot);
  std::filesystem::remove(shot.string() + ".layout.json");
}

// A fixture whose tests share one run on two lavapipes (it is the slow part): `Fixture`'s
// SetUpTestSuite calls start() once per process; the run's folder goes when the suite ends.
// Each fixture is a class of its own (`Fixture`), so each has its own run.
template <typename Fixture>
class TwoLavapipesRun : public ::testing::Test {
 protected:
  // `arguments` (a `run` command line but its --out) into the folder `name` of `suite`'s.
  static void start(const std::string& suite, const std::string& name,
                    const std::string& arguments) {
    devices_ = new TwoLavapipes(suite);
    out_ = new std::filesystem::path(scratch_path(suite, name));
    std::filesystem::remove_all(*out_);
    result_ = new CommandResult(run_into(*out_, arguments));
  }
  static void TearDownTestSuite() {
    std::filesystem::remove_all(*out_);
    delete out_;
    delete result_;
    delete devices_;
  }
  // `report` on the shared run, which must have succeeded: its report.md into `page`.
  static void report_shared_run(std::string& page) {
    ASSERT_EQ(result_->exit_code, 0) << result_->output;
    const auto report = run_gpuoverlap("report " + out_->string());
    ASSERT_EQ(report.exit_code, 0) << report.output;
    page = read_text_file(*out_ / "report.md");
  }
  // gpuoverlap with `arguments`, seeing the same two devices.
  static CommandResult run_with(const std::string& arguments) { return devices_->run(arguments); }
  // `arguments` (a `run` command line but its --out) into `out`, seeing the same two devices.
  static CommandResult run_into(const std::filesystem::path& out, const std::string& arguments) {
    return devices_->run(arguments + " --out " + out.string());
  }
  static inline TwoLavapipes* devices_ = nullptr;
  static inline std::filesystem::path* out_ = nullptr;
  static inline CommandResult* result_ = nullptr;
};

}  // namespace gpuoverlap
