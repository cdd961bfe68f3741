#include "common/machine_load.h"

#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>
#include <vector>

#include "common/table.h"

namespace book {

namespace {

std::string first_line(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// The busy and total jiffies of a "cpu  user nice system idle iowait irq softirq steal ..." line.
bool jiffies(const std::string& line, unsigned long long& busy, unsigned long long& total) {
  std::istringstream in(line);
  std::string label;
  if (!(in >> label) || label != "cpu") return false;
  std::vector<unsigned long long> fields;
  for (unsigned long long value; in >> value;) fields.push_back(value);
  if (fields.size() < 4) return false;
  total = 0;
  // user nice system idle iowait irq softirq steal: guest time is already inside user and nice.
  for (std::size_t i = 0; i < fields.size() && i < 8; ++i) total += fields[i];
  const unsigned long long idle = fields[3] + (fields.size() > 4 ? fields[4] : 0);
  busy = total - idle;
  return true;
}

}  // namespace

double cpu_busy_fraction(const std::string& stat_before, const std::string& stat_after) {
  unsigned long long busy0 = 0, total0 = 0, busy1 = 0, total1 = 0;
  if (!jiffies(stat_before, busy0, total0) || !jiffies(stat_after, busy1, total1)) return -1;
  if (total1 <= total0 || busy1 < busy0) return -1;
  return static_cast<double>(busy1 - busy0) / static_cast<double>(total1 - total0);
}

MachineLoad measure_machine_load(std::chrono::milliseconds sample) {
  MachineLoad load;
  load.cores = static_cast<int>(std::thread::hardware_concurrency());
  std::istringstream loadavg(first_line("/proc/loadavg"));
  if (!(loadavg >> load.load1 >> load.load5 >> load.load15))
    load.load1 = load.load5 = load.load15 = -1;
  const std::string before = first_line("/proc/stat");
  std::this_thread::sleep_for(sample);
  load.busy_fraction = cpu_busy_fraction(before, first_line("/proc/stat"));
  load.sample_seconds = std::chrono::duration<double>(sample).count();
  load.busy = load.busy_fraction >= kBusyFraction;
  return load;
}

std::string describe(const MachineLoad& load) {
  std::ostringstream line;
  line << "machine: " << load.cores << " cores";
  if (load.load1 >= 0)
    line << "; load average " << fixed(load.load1, 2) << ", " << fixed(load.load5, 2) << ", "
         << fixed(load.load15, 2) << " (1, 5, 15 min)";
  if (load.busy_fraction < 0) {
    line << "; CPU use unknown (no /proc/stat)";
    return line.str();
  }
  line << "; CPUs " << fixed(100 * load.busy_fraction, 0) << "% busy in the "
       << fixed(load.sample_seconds, 2) << " s before this run: ";
  if (load.busy)
    line << "BUSY — other work is running, so the timings below are noisy; compare only numbers "
            "from this one run, or rerun when the machine is quiet";
  else
    line << "quiet";
  return line.str();
}

MachineLoad print_machine_load() { return print_machine_load(std::cout); }

MachineLoad print_machine_load(std::ostream& out) {
  const MachineLoad load = measure_machine_load();
  out << describe(load) << std::endl;
  return load;
}

}  // namespace book
