#include "app/command_support.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include "core/output_directory.h"

namespace gpuoverlap::commands {

std::string default_out_directory(const std::string& suffix) {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
#if defined(_WIN32)
  localtime_s(&tm, &now);
#else
  localtime_r(&now, &tm);
#endif
  char text[64];
  std::strftime(text, sizeof text, "results/%Y%m%d-%H%M%S", &tm);
  return unused_directory_name(text + suffix).string();
}

Result<std::unique_ptr<GpuApi>> open_api(bool validation, bool synchronization) {
  return open_gpu_api({.validation = validation, .synchronization_validation = synchronization});
}

namespace {

std::vector<DeviceCandidate> candidates_of(const GpuApi& api) {
  std::vector<DeviceCandidate> candidates;
  for (const DeviceFacts& d : api.devices()) candidates.push_back(d.candidate);
  return candidates;
}

void announce(const GpuApi& api, const DeviceChoice& chosen) {
  const DeviceFacts& device = api.devices()[chosen.index];
  std::cerr << fmt::format("device {}: {} ({}; driver {} {})\n", chosen.index,
                           device.candidate.name, chosen.reason, device.driver_name,
                           device.driver_info);
}

}  // namespace

Result<DeviceChoice> pick_device(const GpuApi& api, const std::string& wanted) {
  auto chosen = choose_device(candidates_of(api), wanted);
  if (!chosen) return chosen.error();
  announce(api, *chosen);
  return chosen;
}

Result<DeviceChoices> pick_devices(const GpuApi& api, const std::vector<std::string>& requests) {
  return choose_devices(candidates_of(api), requests);
}

void announce_devices(const GpuApi& api, const DeviceChoices& choices) {
  for (const DeviceChoice& c : choices.devices) announce(api, c);
}

int finish(const ScenarioExecutor& executor, int status) {
  if (executor.abandoned_device()) {
    std::cout.flush();
    std::cerr.flush();
    std::_Exit(status);
  }
  return status;
}

int finish(const std::vector<std::unique_ptr<ScenarioExecutor>>& executors, int status) {
  for (const auto& executor : executors) finish(*executor, status);
  return status;
}

void PreparedOutput::discard_if_empty() const {
  std::error_code ec;
  if (!existed && std::filesystem::is_empty(path, ec)) std::filesystem::remove(path, ec);
}

Result<PreparedOutput> prepare_output(const std::filesystem::path& path, bool replace,
                                      std::uint64_t needed_bytes) {
  std::error_code ec;
  PreparedOutput out{path, std::filesystem::exists(path, ec)};
  GPUOVERLAP_TRY(
      prepare_output_directory({.path = path, .replace = replace, .needed_bytes = needed_bytes}));
  return out;
}

nlohmann::json try_poller_placement(const PollerPlacement& placement) {
  return try_poller_placements({placement}).front();
}

std::vector<nlohmann::json> try_poller_placements(const std::vector<PollerPlacement>& placements) {
  std::vector<PollerGranted> granted(placements.size());
  for (std::size_t i = 0; i < placements.size(); ++i) {
    std::thread([&] { granted[i] = place_this_thread(placements[i]); }).join();
    if (!granted[i].refused.empty())
      std::cerr << (placements.size() == 1 ? std::string("poller")
                                           : fmt::format("poller {}", i + 1))
                << ": " << granted[i].refused << "; it runs at " << describe(granted[i].scheduling)
                << "\n";
  }
  bool all_pinned = !placements.empty();
  for (const PollerGranted& g : granted) all_pinned = all_pinned && g.cpu.has_value();
  const bool reserved = all_pinned && reserve_poller_cpus(placements);
  std::vector<nlohmann::json> out;
  for (std::size_t i = 0; i < placements.size(); ++i)
    out.push_back(to_json(placements[i], granted[i], reserved));
  return out;
}

namespace {
std::mutex& prefixed_lines_mutex() {
  static std::mutex mutex;
  return mutex;
}
}  // namespace

PrefixedLines::PrefixedLines(std::ostream& sink, std::string prefix)
    : std::ostream(nullptr), buffer_(sink, std::move(prefix)) {
  rdbuf(&buffer_);
}

PrefixedLines::~PrefixedLines() {
  buffer_.sputc('\n');  // a last line without its newline still goes out whole
}

void PrefixedLines::Buffer::emit() {
  if (pending_.empty() || pending_ == "\n") {
    pending_.clear();
    return;
  }
  std::lock_guard lock(prefixed_lines_mutex());
  sink_ << prefix_ << pending_ << std::flush;
  pending_.clear();
}

int PrefixedLines::Buffer::overflow(int c) {
  if (c == traits_type::eof()) return traits_type::not_eof(c);
  pending_ += static_cast<char>(c);
  if (c == '\n') emit();
  return c;
}

std::streamsize PrefixedLines::Buffer::xsputn(const char* text, std::streamsize count) {
  for (std::streamsize i = 0; i < count; ++i) overflow(static_cast<unsigned char>(text[i]));
  return count;
}

}  // namespace gpuoverlap::commands
