#include "core/cpu_steal.h"

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#if !defined(_WIN32)
#include <unistd.h>
#endif

namespace gpuoverlap {

std::optional<CpuTimes> read_cpu_times() {
  std::ifstream in("/proc/stat");
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  std::istringstream fields(line);
  std::string label;
  // cpu user nice system idle iowait irq softirq steal ...
  std::uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0,
                steal = 0;
  if (!(fields >> label >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal) ||
      label != "cpu")
    return std::nullopt;
  return CpuTimes{user + nice + system + irq + softirq, steal};
}

std::optional<std::uint64_t> interrupts_on_cpu(std::string_view text, int cpu) {
  std::istringstream in{std::string(text)};
  std::string header;
  if (cpu < 0 || !std::getline(in, header)) return std::nullopt;
  // The header names the columns: "CPU0 CPU1 ..." (offline CPUs have none).
  std::istringstream names(header);
  std::size_t columns = 0;
  std::optional<std::size_t> column;
  for (std::string name; names >> name; ++columns)
    if (name == "CPU" + std::to_string(cpu)) column = columns;
  if (!column) return std::nullopt;
  std::uint64_t total = 0;
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string label;
    fields >> label;  // "0:", "LOC:", "ERR:" ...
    // A source's counts, one per CPU; lines with fewer (ERR, MIS: one total) are skipped.
    std::vector<std::uint64_t> counts;
    for (std::uint64_t count = 0; counts.size() < columns && (fields >> count);)
      counts.push_back(count);
    if (counts.size() == columns) total += counts[*column];
  }
  return total;
}

std::optional<std::string> read_proc_interrupts() {
  std::ifstream in("/proc/interrupts");
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::optional<std::uint64_t> read_interrupts_on_cpu(int cpu) {
  const auto text = read_proc_interrupts();
  return text ? interrupts_on_cpu(*text, cpu) : std::nullopt;
}

std::optional<double> steal_fraction(const CpuTimes& before, const CpuTimes& after) {
  if (after.busy_ticks < before.busy_ticks || after.steal_ticks < before.steal_ticks)
    return std::nullopt;
  const double busy = double(after.busy_ticks - before.busy_ticks);
  const double steal = double(after.steal_ticks - before.steal_ticks);
  if (busy + steal <= 0) return std::nullopt;
  return steal / (busy + steal);
}

std::optional<double> steal_ms(const CpuTimes& before, const CpuTimes& after) {
  if (after.steal_ticks < before.steal_ticks) return std::nullopt;
#if defined(_WIN32)
  const double ticks_per_s = 100;  // never read there: read_cpu_times has no source
#else
  const double ticks_per_s = static_cast<double>(sysconf(_SC_CLK_TCK));
#endif
  if (ticks_per_s <= 0) return std::nullopt;
  return 1000.0 * static_cast<double>(after.steal_ticks - before.steal_ticks) / ticks_per_s;
}

}  // namespace gpuoverlap
