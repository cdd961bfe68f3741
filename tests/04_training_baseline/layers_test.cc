// Graded tests of train.layernorm_backward and train.attention_backward: the backward pass
// against central finite differences of the forward pass, in double precision (tolerance 1e-7
// relative), and the float instantiation against the double one (tolerance 1e-4).
#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include "chapters/04_training_baseline/layers.h"
#include "common/testing/exercise.h"
#include "tests/04_training_baseline/gradcheck.h"

namespace book::train {
namespace {

using testing::expect_close;
using testing::numeric_gradient;
using testing::random_vector;
using testing::to_float;
using testing::weighted_sum;

constexpr double kFiniteDifferenceTol = 1e-7;
constexpr double kFloatTol = 1e-4;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct LayerNormCase {
  int rows = 7, channels = 13;  // awkward sizes: not multiples of 8
  std::vector<double> x, gain, bias, dout;
  explicit LayerNormCase(std::uint64_t seed) {
    Rng rng(seed);
    x = random_vector(rows * channels, rng, -2.0, 3.0);  // a non-zero mean on purpose
    gain = random_vector(channels, rng, 0.5, 1.5);
    bias = random_vector(channels, rng);
    dout = random_vector(rows * channels, rng);
  }
  double loss() {
    std::vector<double> out(x.size()), mean(rows), rstd(rows);
    layernorm_forward(x.data(), gain.data(), bias.data(), rows, channels, out.data(), mean.data(),
                      rstd.data());
    return weighted_sum(out, dout);
  }
};

EXERCISE_TEST("train.layernorm_backward", LayerNormBackward, MatchesFiniteDifferences) {
  LayerNormCase c(41);
  std::vector<double> out(c.x.size()), mean(c.rows), rstd(c.rows);
  layernorm_forward(c.x.data(), c.gain.data(), c.bias.data(), c.rows, c.channels, out.data(),
                    mean.data(), rstd.data());
  std::vector<double> dx(c.x.size(), 0.0), dgain(c.channels, 0.0), dbias(c.channels, 0.0);
  layernorm_backward(c.dout.data(), c.x.data(), c.gain.data(), mean.data(), rstd.data(), c.rows,
                     c.channels, dx.data(), dgain.data(), dbias.data());
  auto loss = [&] { return c.loss(); };
  expect_close("dx", numeric_gradient(c.x, loss), dx, kFiniteDifferenceTol);
  expect_close("dgain", numeric_gradient(c.gain, loss), dgain, kFiniteDifferenceTol);
  expect_close("dbias", numeric_gradient(c.bias, loss), dbias, kFiniteDifferenceTol);
}

EXERCISE_TEST("train.layernorm_backward", LayerNormBackward, AddsIntoExistingGradients) {
  // The residual stream and the shared gain receive gradients from several places: the layer
  // must add (+=), not overwrite. Start from random values and compare with start + gradient.
  LayerNormCase c(42);
  std::vector<double> out(c.x.size()), mean(c.rows), rstd(c.rows);
  layernorm_forward(c.x.data(), c.gain.data(), c.bias.data(), c.rows, c.channels, out.data(),
                    mean.data(), rstd.data());
  std::vector<double> dx(c.x.size(), 0.0), dgain(c.channels, 0.0), dbias(c.channels, 0.0);
  layernorm_backward(c.dout.data(), c.x.data(), c.gain.data(), mean.data(), rstd.data(), c.rows,
                     c.channels, dx.data(), dgain.data(), dbias.data());
  Rng rng(43);
  auto dx0 = random_vector(dx.size(), rng), dgain0 = random_vector(c.channels, rng),
       dbias0 = random_vector(c.channels, rng);
  auto dx1 = dx0, dgain1 = dgain0, dbias1 = dbias0;
  layernorm_backward(c.dout.data(), c.x.data(), c.gain.data(), mean.data(), rstd.data(), c.rows,
                     c.channels, dx1.data(), dgain1.data(), dbias1.data());
  for (std::size_t i = 0; i < dx.size(); ++i) dx0[i] += dx[i];
  for (int i = 0; i < c.channels; ++i) dgain0[i] += dgain[i], dbias0[i] += dbias[i];
  expect_close("dx (accumulated)", dx0, dx1, 1e-12);
  expect_close("dgain (accumulated)", dgain0, dgain1, 1e-12);
  expect_close("dbias (accumulated)", dbias0, dbias1, 1e-12);
}

EXERCISE_TEST("train.layernorm_backward", LayerNormBackward, FloatMatchesDouble) {
  LayerNormCase c(44);
  std::vector<double> out(c.x.size()), mean(c.rows), rstd(c.rows);
  layernorm_forward(c.x.data(), c.gain.data(), c.bias.data(), c.rows, c.channels, out.data(),
                    mean.data(), rstd.data());
  std::vector<double> dx(c.x.size(), 0.0), dgain(c.channels, 0.0), dbias(c.channels, 0.0);
  layernorm_backward(c.dout.data(), c.x.data(), c.gain.data(), mean.data(), rstd.data(), c.rows,
                     c.channels, dx.data(), dgain.data(), dbias.data());
  auto xf = to_float(c.x), gf = to_float(c.gain), bf = to_float(c.bias), df = to_float(c.dout);
  std::vector<float> outf(xf.size()), meanf(c.rows), rstdf(c.rows);
  layernorm_forward(xf.data(), gf.data(), bf.data(), c.rows, c.channels, outf.data(), meanf.data(),
                    rstdf.data());
  std::vector<float> dxf(xf.size(), 0.0f), dgf(c.channels, 0.0f), dbf(c.channels, 0.0f);
  layernorm_backward(df.data(), xf.data(), gf.data(), meanf.data(), rstdf.data(), c.rows,
                     c.channels, dxf.data(), dgf.data(), dbf.data());
  expect_close("dx (float)", dx, {dxf.begin(), dxf.end()}, kFloatTol);
  expect_close("dgain (float)", dgain, {dgf.begin(), dgf.end()}, kFloatTol);
  expect_close("dbias (float)", dbias, {dbf.begin(), dbf.end()}, kFloatTol);
}

struct AttentionCase {
  int batch, seq_len, n_head, head_size;
  std::vector<double> qkv, dout;
  AttentionCase(std::uint64_t seed, int b, int t, int h, int d)
      : batch(b), seq_len(t), n_head(h), head_size(d) {
    Rng rng(seed);
    qkv = random_vector(static_cast<std::size_t>(b) * t * 3 * h * d, rng, -1.5, 1.5);
    dout = random_vector(static_cast<std::size_t>(b) * t * h * d, rng);
  }
  std::size_t att_size() const {
    return static_cast<std::size_t>(batch) * n_head * seq_len * seq_len;
  }
  double loss() {
    std::vector<double> att(att_size()), out(dout.size());
    attention_forward(qkv.data(), batch, seq_len, n_head, head_size, att.data(), out.data());
    return weighted_sum(out, dout);
  }
};

EXERCISE_TEST("train.attention_backward", AttentionBackward, MatchesFiniteDifferences) {
  for (auto [b, t, h, d] :
       {std::array{2, 5, 3, 4}, std::array{1, 7, 2, 5}, std::array{3, 1, 1, 3}}) {
    AttentionCase c(50 + t, b, t, h, d);
    std::vector<double> att(c.att_size()), out(c.dout.size()),
        dqkv(c.qkv.size(), kNaN);  // poisoned
    attention_forward(c.qkv.data(), b, t, h, d, att.data(), out.data());
    attention_backward(c.dout.data(), c.qkv.data(), att.data(), b, t, h, d, dqkv.data());
    SCOPED_TRACE("B=" + std::to_string(b) + " T=" + std::to_string(t) +
                 " heads=" + std::to_string(h) + " head_size=" + std::to_string(d));
    expect_close("dqkv", numeric_gradient(c.qkv, [&] { return c.loss(); }), dqkv,
                 kFiniteDifferenceTol);
  }
}

EXERCISE_TEST("train.attention_backward", AttentionBackward, OverwritesItsOutput) {
  // dqkv is written, not added to: random garbage in it beforehand must not change the result.
  AttentionCase c(60, 2, 4, 2, 3);
  std::vector<double> att(c.att_size()), out(c.dout.size());
  attention_forward(c.qkv.data(), 2, 4, 2, 3, att.data(), out.data());
  std::vector<double> clean(c.qkv.size(), 0.0);
  attention_backward(c.dout.data(), c.qkv.data(), att.data(), 2, 4, 2, 3, clean.data());
  Rng rng(61);
  auto dirty = random_vector(c.qkv.size(), rng, 5.0, 9.0);
  attention_backward(c.dout.data(), c.qkv.data(), att.data(), 2, 4, 2, 3, dirty.data());
  expect_close("dqkv over garbage", clean, dirty, 1e-12);
}

EXERCISE_TEST("train.attention_backward", AttentionBackward, FloatMatchesDouble) {
  const int b = 2, t = 6, h = 2, d = 8;
  AttentionCase c(62, b, t, h, d);
  std::vector<double> att(c.att_size()), out(c.dout.size()), dqkv(c.qkv.size());
  attention_forward(c.qkv.data(), b, t, h, d, att.data(), out.data());
  attention_backward(c.dout.data(), c.qkv.data(), att.data(), b, t, h, d, dqkv.data());
  auto qf = to_float(c.qkv), df = to_float(c.dout);
  std::vector<float> attf(c.att_size()), outf(df.size()),
      dqf(qf.size(), std::numeric_limits<float>::quiet_NaN());
  attention_forward(qf.data(), b, t, h, d, attf.data(), outf.data());
  attention_backward(df.data(), qf.data(), attf.data(), b, t, h, d, dqf.data());
  expect_close("dqkv (float)", dqkv, {dqf.begin(), dqf.end()}, kFloatTol);
}

}  // namespace
}  // namespace book::train
