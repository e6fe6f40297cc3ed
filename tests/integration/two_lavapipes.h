// Two Vulkan devices on any machine with lavapipe: the loader is given lavapipe's ICD twice, as a
// host with two GPUs of one model would list them. For the tests of runs on several devices.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

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

}  // namespace gpuoverlap
