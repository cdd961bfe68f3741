// Graded test of tp.sequence_parallel_norm: t = 1, 2 and 4 thread ranks, each with its 1/t of the
// tokens, normalise them, gather every rank's into the whole normalised input, and in the
// backward pass sum the ranks' partial gradients and run LayerNorm's backward on their own
// tokens — equal to a whole LayerNorm in plain loops (double precision, tolerance 1e-12), with
// one all-gather forward and one reduce-scatter backward of rows × C elements.
#include <cmath>
#include <string>
#include <vector>

#include "chapters/03_collectives/threads.h"
#include "chapters/07_tensor_parallel/sequence_parallel_norm.h"
#include "chapters/07_tensor_parallel/tensor_parallel_group.h"
#include "common/testing/exercise.h"
#include "tests/07_tensor_parallel/tp_testing.h"

namespace book::tp {
namespace {

using testing::expect_close;
using testing::kNaN;
using testing::random_vector;

constexpr double kTolerance = 1e-12;

// LayerNorm over rows of x [rows, c] and its backward for dout, in plain loops.
struct WholeNorm {
  std::vector<double> out, dx, dgain, dbias;
  WholeNorm(const std::vector<double>& x, const std::vector<double>& gain,
            const std::vector<double>& bias, const std::vector<double>& dout, int rows, int c)
      : out(x.size()), dx(x.size()), dgain(c, 0.0), dbias(c, 0.0) {
    for (int i = 0; i < rows; ++i) {
      const double* xi = x.data() + i * c;
      double mean = 0, var = 0;
      for (int j = 0; j < c; ++j) mean += xi[j] / c;
      for (int j = 0; j < c; ++j) var += (xi[j] - mean) * (xi[j] - mean) / c;
      const double rstd = 1 / std::sqrt(var + 1e-5);
      double sum_g = 0, sum_gx = 0;  // Σ dnorm, Σ dnorm · xhat
      for (int j = 0; j < c; ++j) {
        const double xhat = (xi[j] - mean) * rstd, d = dout[i * c + j];
        out[i * c + j] = xhat * gain[j] + bias[j];
        dgain[j] += d * xhat;
        dbias[j] += d;
        sum_g += d * gain[j];
        sum_gx += d * gain[j] * xhat;
      }
      for (int j = 0; j < c; ++j) {
        const double xhat = (xi[j] - mean) * rstd;
        dx[i * c + j] = rstd * (dout[i * c + j] * gain[j] - sum_g / c - xhat * sum_gx / c);
      }
    }
  }
};

EXERCISE_TEST("tp.sequence_parallel_norm", SequenceParallelNorm, ShardsNormaliseAndGather) {
  const int rows = 8, c = 7;
  const auto x = random_vector(static_cast<std::size_t>(rows) * c, 1, -2, 3);
  const auto gain = random_vector(c, 2, 0.5, 1.5), bias = random_vector(c, 3);
  for (int t : {1, 2, 4}) {
    // Each rank's partial gradient of the whole output; the true gradient is their sum.
    std::vector<std::vector<double>> partial(t);
    std::vector<double> dout(static_cast<std::size_t>(rows) * c, 0.0);
    for (int r = 0; r < t; ++r) {
      partial[r] = random_vector(dout.size(), 10 + r);
      for (std::size_t i = 0; i < dout.size(); ++i) dout[i] += partial[r][i];
    }
    const WholeNorm want(x, gain, bias, dout, rows, c);
    std::vector<std::vector<double>> dgain(t), dbias(t);
    coll::run_ranks(t, [&](coll::Communicator& comm) {
      const int r = comm.rank(), held = rows / t;
      SCOPED_TRACE("rank " + std::to_string(r) + " of " + std::to_string(t));
      TensorParallelGroup<double> group(comm);
      const std::vector<double> x_shard(x.begin() + r * held * c, x.begin() + (r + 1) * held * c);
      std::vector<double> ln(x_shard.size(), kNaN), mean(held, kNaN), rstd(held, kNaN);
      std::vector<double> whole(x.size(), kNaN);
      sequence_parallel_norm_forward(x_shard.data(), gain.data(), bias.data(), held, c, ln.data(),
                                     mean.data(), rstd.data(), whole.data(), group);
      expect_close("this rank's normalised tokens",
                   {want.out.begin() + r * held * c, want.out.begin() + (r + 1) * held * c}, ln,
                   kTolerance);
      expect_close("the gathered whole", want.out, whole, kTolerance);
      EXPECT_EQ(group.counts().all_gathers, 1);
      EXPECT_EQ(group.counts().all_gather_elements, x.size()) << "rows × C";
      EXPECT_EQ(group.counts().calls(), 1);

      group.reset_counts();
      std::vector<double> d_shard(x_shard.size(), kNaN);
      std::vector<double> dx = random_vector(x_shard.size(), 20 + r);  // added into
      const std::vector<double> dx_start = dx;
      dgain[r] = random_vector(c, 30);
      dbias[r] = random_vector(c, 31);
      const std::vector<double> dgain_start = dgain[r], dbias_start = dbias[r];
      sequence_parallel_norm_backward(partial[r].data(), x_shard.data(), gain.data(), mean.data(),
                                      rstd.data(), held, c, d_shard.data(), dx.data(),
                                      dgain[r].data(), dbias[r].data(), group);
      for (std::size_t i = 0; i < dx.size(); ++i) dx[i] -= dx_start[i];
      expect_close("dx of this rank's tokens",
                   {want.dx.begin() + r * held * c, want.dx.begin() + (r + 1) * held * c}, dx,
                   kTolerance);
      for (int j = 0; j < c; ++j) {
        dgain[r][j] -= dgain_start[j];
        dbias[r][j] -= dbias_start[j];
      }
      EXPECT_EQ(group.counts().reduce_scatters, 1) << "the gather's conjugate";
      EXPECT_EQ(group.counts().reduce_scatter_elements, x.size());
      EXPECT_EQ(group.counts().calls(), 1);
    });
    // dgain and dbias: each rank's sum over its own tokens; together, the whole.
    std::vector<double> gain_sum(c, 0.0), bias_sum(c, 0.0);
    for (int r = 0; r < t; ++r)
      for (int j = 0; j < c; ++j) {
        gain_sum[j] += dgain[r][j];
        bias_sum[j] += dbias[r][j];
      }
    expect_close("Σ over ranks of dgain (t = " + std::to_string(t) + ")", want.dgain, gain_sum,
                 kTolerance);
    expect_close("Σ over ranks of dbias", want.dbias, bias_sum, kTolerance);
  }
}

}  // namespace
}  // namespace book::tp
