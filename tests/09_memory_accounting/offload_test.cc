// Optimizer-state offload: a device budget of 8 B/param refuses the mixed-precision AdamW state
// (16 B/param) and holds the offloaded one (4 B/param); the host holds the 12 B/param; each step
// moves 2 B/param each way, counted; the weights equal the un-offloaded run's bit for bit.
#include "chapters/09_memory_accounting/offload.h"

#include <gtest/gtest.h>

#include <vector>

#include "common/rng.h"
#include "common/testing/expect_error.h"

namespace book::mem {
namespace {

constexpr std::size_t kPsi = 1001;  // odd on purpose

std::vector<float> seeded(std::uint64_t seed) {
  Rng rng(seed);
  std::vector<float> v(kPsi);
  for (float& x : v) x = static_cast<float>(rng.uniform(-1, 1));
  return v;
}

void train(OffloadedAdamW& adam, int steps) {
  Rng rng(99);
  for (int s = 0; s < steps; ++s) {
    for (BFloat16& g : adam.grads()) g = to_bf16(static_cast<float>(rng.uniform(-0.1, 0.1)));
    adam.step(1e-2f);
  }
}

TEST(Offload, DeviceBudgetRefusesTheStateAndHoldsTheOffloadedOne) {
  const std::vector<float> init = seeded(1);
  BudgetedArena device("device", 8 * kPsi), host("host", 1 << 30);
  testing::expect_error([&] { OffloadedAdamW adam(init, device, host, false); },
                        {"device out of memory", "budget 8008", "offload the optimizer states"});
  BudgetedArena device2("device", 8 * kPsi), host2("host", 1 << 30);
  OffloadedAdamW adam(init, device2, host2, true);
  train(adam, 3);
  EXPECT_EQ(device2.tracker().peak_total(), 4 * kPsi);  // BF16 weights + BF16 gradients
  EXPECT_EQ(device2.tracker().peak(MemoryCategory::kParameters), 2 * kPsi);
  EXPECT_EQ(host2.tracker().peak(MemoryCategory::kMasterWeights), 4 * kPsi);
  EXPECT_EQ(host2.tracker().peak(MemoryCategory::kOptimizerStates), 8 * kPsi);
  EXPECT_EQ(host2.tracker().peak(MemoryCategory::kOther), 4 * kPsi);  // FP32 gradient scratch
  EXPECT_EQ(adam.moved().to_host, 3 * 2 * kPsi);
  EXPECT_EQ(adam.moved().to_device, 3 * 2 * kPsi);
}

TEST(Offload, WeightsEqualTheUnoffloadedRunBitForBit) {
  const std::vector<float> init = seeded(2);
  BudgetedArena d1("device", 1 << 30), h1("host", 1 << 30), d2("device", 1 << 30),
      h2("host", 1 << 30);
  OffloadedAdamW on_device(init, d1, h1, false), offloaded(init, d2, h2, true);
  train(on_device, 5);
  train(offloaded, 5);
  EXPECT_EQ(d1.tracker().peak_total(), 16 * kPsi);  // everything on the device
  EXPECT_EQ(on_device.moved().to_host + on_device.moved().to_device, 0u);
  for (std::size_t i = 0; i < kPsi; ++i) {
    ASSERT_EQ(on_device.master()[i], offloaded.master()[i]) << "parameter " << i;
    ASSERT_EQ(on_device.weights()[i].bits, offloaded.weights()[i].bits) << "parameter " << i;
  }
  // And the update is AdamW's: chapter 4's step on a plain copy gives the same master weights.
  std::vector<float> p = init, m(kPsi, 0), v(kPsi, 0), g(kPsi);
  Rng rng(99);
  for (int s = 1; s <= 5; ++s) {
    for (float& x : g) x = to_float(to_bf16(static_cast<float>(rng.uniform(-0.1, 0.1))));
    train::adamw_step(p, g, m, v, s, 1e-2f, {});
  }
  for (std::size_t i = 0; i < kPsi; ++i)
    ASSERT_EQ(p[i], offloaded.master()[i]) << "parameter " << i;
  EXPECT_NE(p[0], init[0]);  // it moved
}

TEST(Offload, HostBudgetIsCheckedToo) {
  const std::vector<float> init = seeded(3);
  BudgetedArena device("device", 1 << 30), host("host", 10 * kPsi);
  testing::expect_error([&] { OffloadedAdamW adam(init, device, host, true); },
                        {"host out of memory", "optimizer_states"});
}

}  // namespace
}  // namespace book::mem
