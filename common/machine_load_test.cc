// The machine-load line: the busy share from two /proc/stat readings, and what the line says.
#include "common/machine_load.h"

#include <gtest/gtest.h>

namespace book {
namespace {

TEST(MachineLoad, BusyFractionFromTwoStatLines) {
  // user nice system idle iowait irq softirq steal: 300 busy and 100 idle jiffies pass.
  const std::string before = "cpu  1000 0 500 8000 100 0 0 0 0 0";
  const std::string after = "cpu  1250 0 550 8090 110 0 0 0 0 0";
  EXPECT_DOUBLE_EQ(cpu_busy_fraction(before, after), 300.0 / 400.0);
  EXPECT_EQ(cpu_busy_fraction(before, before), -1) << "no time passed";
  EXPECT_EQ(cpu_busy_fraction("cpu0 1 2 3 4", after), -1) << "not the total line";
  EXPECT_EQ(cpu_busy_fraction("", after), -1);
}

TEST(MachineLoad, TheLineFlagsABusyMachine) {
  MachineLoad load;
  load.cores = 2;
  load.load1 = 9.64;
  load.load5 = 8.16;
  load.load15 = 6.11;
  load.busy_fraction = 0.97;
  load.sample_seconds = 0.25;
  load.busy = true;
  const std::string busy = describe(load);
  EXPECT_NE(busy.find("machine: 2 cores; load average 9.64, 8.16, 6.11 (1, 5, 15 min); CPUs 97% "
                      "busy in the 0.25 s before this run: BUSY"),
            std::string::npos)
      << busy;
  load.busy_fraction = 0.03;
  load.busy = false;
  const std::string quiet = describe(load);
  EXPECT_NE(quiet.find("3% busy in the 0.25 s before this run: quiet"), std::string::npos) << quiet;
}

TEST(MachineLoad, AMeasurementHasCoresAndAShare) {
  const MachineLoad load = measure_machine_load(std::chrono::milliseconds(20));
  EXPECT_GE(load.cores, 1);
  EXPECT_LE(load.busy_fraction, 1.0);
  EXPECT_EQ(load.busy, load.busy_fraction >= kBusyFraction);
}

}  // namespace
}  // namespace book
