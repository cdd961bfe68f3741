// DeviceBuffer: data survives host → device → host, poison is NaN, sizes are checked, and moves
// hand the memory over.
#include "common/device_buffer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "common/dtype.h"
#include "common/rng.h"
#include "common/testing/expect_error.h"
#include "common/testing/gpu.h"

namespace book::cuda {
namespace {

TEST(DeviceBuffer, RoundTripsSeededData) {
  BOOK_REQUIRE_GPU();
  Rng rng(3);
  std::vector<float> host(1037);  // not a multiple of anything
  for (auto& x : host) x = static_cast<float>(rng.uniform(-1.0, 1.0));
  DeviceBuffer<float> device(host.size());
  EXPECT_EQ(device.size(), 1037u);
  EXPECT_EQ(device.bytes(), 1037u * sizeof(float));
  ASSERT_NE(device.data(), nullptr);
  device.fill_poison();
  device.copy_from_host(host);
  std::vector<float> back(host.size(), std::nanf(""));
  device.copy_to_host(back);
  for (std::size_t i = 0; i < host.size(); ++i)
    ASSERT_EQ(back[i], host[i]) << "element " << i << " of " << host.size();
}

TEST(DeviceBuffer, PoisonIsNanInEveryFloatingType) {
  BOOK_REQUIRE_GPU();
  DeviceBuffer<float> f(33);
  DeviceBuffer<double> d(33);
  DeviceBuffer<BFloat16> b(33);
  DeviceBuffer<Half> h(33);
  f.fill_poison();
  d.fill_poison();
  b.fill_poison();
  h.fill_poison();
  std::vector<float> fs(33, 1.0f);
  std::vector<double> ds(33, 1.0);
  std::vector<BFloat16> bs(33, to_bf16(1.0f));
  std::vector<Half> hs(33, to_half(1.0f));
  f.copy_to_host(fs);
  d.copy_to_host(ds);
  b.copy_to_host(bs);
  h.copy_to_host(hs);
  for (std::size_t i = 0; i < 33; ++i) {
    EXPECT_TRUE(std::isnan(fs[i])) << "f32 element " << i << " = " << fs[i];
    EXPECT_TRUE(std::isnan(ds[i])) << "f64 element " << i << " = " << ds[i];
    EXPECT_TRUE(std::isnan(to_float(bs[i]))) << "bf16 element " << i;
    EXPECT_TRUE(std::isnan(to_float(hs[i]))) << "f16 element " << i;
  }
}

TEST(DeviceBuffer, SizeMismatchIsABookError) {
  BOOK_REQUIRE_GPU();
  DeviceBuffer<float> device(10);
  std::vector<float> nine(9), eleven(11);
  testing::expect_error([&] { device.copy_from_host(nine); },
                        {"copy_from_host", "9 elements", "device buffer 10"});
  testing::expect_error([&] { device.copy_to_host(eleven); },
                        {"copy_to_host", "11 elements", "device buffer 10"});
}

// No GPU needed: an empty buffer allocates nothing, and its size checks come before any CUDA call.
TEST(DeviceBuffer, EmptyBufferNeedsNoDevice) {
  DeviceBuffer<float> empty;
  EXPECT_EQ(empty.size(), 0u);
  EXPECT_EQ(empty.data(), nullptr);
  EXPECT_TRUE(empty.empty());
  std::vector<float> none, three(3);
  empty.copy_from_host(none);
  empty.copy_to_host(none);
  empty.fill_poison();
  testing::expect_error([&] { empty.copy_from_host(three); }, "3 elements");
  DeviceBuffer<float> zero(0);
  EXPECT_EQ(zero.data(), nullptr);
}

TEST(DeviceBuffer, MovingHandsTheMemoryOver) {
  BOOK_REQUIRE_GPU();
  DeviceBuffer<int> a(16);
  const int* memory = a.data();
  DeviceBuffer<int> b(std::move(a));
  EXPECT_EQ(b.data(), memory);
  EXPECT_EQ(b.size(), 16u);
  EXPECT_EQ(a.data(), nullptr);  // NOLINT(bugprone-use-after-move): moved-from is empty
  EXPECT_EQ(a.size(), 0u);
  DeviceBuffer<int> c(4);
  c = std::move(b);  // c's 4 ints are freed, c takes b's 16
  EXPECT_EQ(c.data(), memory);
  EXPECT_EQ(c.size(), 16u);
  std::vector<int> values(16);
  for (int i = 0; i < 16; ++i) values[i] = 3 * i - 7;
  c.copy_from_host(values);
  std::vector<int> back(16);
  c.copy_to_host(back);
  EXPECT_EQ(back, values);
}

TEST(DeviceBuffer, OverflowingSizeIsRefused) {
  testing::expect_error([] { DeviceBuffer<double> huge(std::size_t(1) << 62); },
                        "overflows the byte count");
}

}  // namespace
}  // namespace book::cuda
