// What the commands that run GPU work share: the default output folder, opening the GPU API,
// choosing the device and ending the process after an abandoned device.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <ostream>
#include <streambuf>
#include <string>
#include <vector>

#include "backends/backends.h"
#include "core/result.h"

namespace gpuoverlap::commands {

// results/<date-time>, or with -2, -3, ... when a run started in the same second took it.
std::string default_out_directory(const std::string& suffix = "");

Result<std::unique_ptr<GpuApi>> open_api(bool validation, bool synchronization = false);

// The device for a command that runs work: chosen, announced on stderr.
Result<DeviceChoice> pick_device(const GpuApi& api, const std::string& wanted);
// The devices of `run --device` (each occurrence of the option one request; see
// choose_devices), chosen without a word: `announce_devices` says them once the output folder
// is made.
Result<DeviceChoices> pick_devices(const GpuApi& api, const std::vector<std::string>& requests);
void announce_devices(const GpuApi& api, const DeviceChoices& choices);

// After a device was abandoned with work possibly still running on it, tearing down the
// instance or unloading the driver under it can crash. Every result file is already written
// (fsync + rename), so the process ends here.
int finish(const ScenarioExecutor& executor, int status);
int finish(const std::vector<std::unique_ptr<ScenarioExecutor>>& executors, int status);

// What the OS grants a stamp poller placed as asked, tried once on a thread of its own before
// the run (each poller thread asks the same); a refusal is one line on stderr, and the run goes
// on at what was granted. With a pinned CPU, the calling thread then leaves it to the poller
// (reserve_poller_cpus): call it before the device is opened. Returns meta.json's "poller".
nlohmann::json try_poller_placement(const PollerPlacement& placement);
// The same for pollers that run at once (`run --concurrent`): each tried, then every pinned CPU
// left to its poller at once. Returns each one's meta.json "poller", in order.
std::vector<nlohmann::json> try_poller_placements(const std::vector<PollerPlacement>& placements);

// An output stream whose text goes to `sink` a whole line at a time, each line after `prefix`,
// under one lock that every such stream shares: the log of devices that run at once, never
// mixed within a line. What is left without a newline goes out when the stream is destroyed.
class PrefixedLines : public std::ostream {
 public:
  PrefixedLines(std::ostream& sink, std::string prefix);
  ~PrefixedLines() override;

 private:
  class Buffer : public std::streambuf {
   public:
    Buffer(std::ostream& sink, std::string prefix) : sink_(sink), prefix_(std::move(prefix)) {}
    void emit();

   protected:
    int overflow(int c) override;
    std::streamsize xsputn(const char* text, std::streamsize count) override;

   private:
    std::ostream& sink_;
    std::string prefix_, pending_;
  };
  Buffer buffer_;
};

// The output folder before any GPU work (core/output_directory.h). On a later failure before
// anything is measured, a folder this created and left empty is removed again.
struct PreparedOutput {
  std::filesystem::path path;
  bool existed = false;
  void discard_if_empty() const;
};

Result<PreparedOutput> prepare_output(const std::filesystem::path& path, bool replace,
                                      std::uint64_t needed_bytes);

}  // namespace gpuoverlap::commands
