#include "core/cpu_steal.h"

#include <fstream>
#include <sstream>
#include <string>

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

std::optional<double> steal_fraction(const CpuTimes& before, const CpuTimes& after) {
  if (after.busy_ticks < before.busy_ticks || after.steal_ticks < before.steal_ticks)
    return std::nullopt;
  const double busy = double(after.busy_ticks - before.busy_ticks);
  const double steal = double(after.steal_ticks - before.steal_ticks);
  if (busy + steal <= 0) return std::nullopt;
  return steal / (busy + steal);
}

}  // namespace gpuoverlap
