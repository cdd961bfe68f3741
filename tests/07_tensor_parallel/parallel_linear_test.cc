// Graded tests of tp.column_parallel_linear and tp.row_parallel_linear: t = 1, 2 and 4 thread
// ranks, each with only its shard of W and b, reproduce the whole layer y = x·W + b and its
// gradients (double precision, against plain loops; tolerance 1e-12 relative), with sequence
// parallelism off and on, and call exactly the collectives of f, g and the scatter.
#include <string>
#include <vector>

#include "chapters/03_collectives/threads.h"
#include "chapters/07_tensor_parallel/parallel_linear.h"
#include "chapters/07_tensor_parallel/tensor_parallel_group.h"
#include "common/testing/exercise.h"
#include "tests/07_tensor_parallel/tp_testing.h"

namespace book::tp {
namespace {

using testing::expect_close;
using testing::kNaN;
using testing::random_vector;

constexpr double kTolerance = 1e-12;

// The whole layer, in plain loops: y = x·W + b, dx = dy·Wᵀ, dW = xᵀ·dy, db = Σ dy.
struct WholeLinear {
  int rows, in, out;
  std::vector<double> x, w, b, dy, y, dx, dw, db;
  WholeLinear(int rows, int in, int out, std::uint64_t seed)
      : rows(rows),
        in(in),
        out(out),
        x(random_vector(static_cast<std::size_t>(rows) * in, seed)),
        w(random_vector(static_cast<std::size_t>(in) * out, seed + 1)),
        b(random_vector(out, seed + 2)),
        dy(random_vector(static_cast<std::size_t>(rows) * out, seed + 3)),
        y(static_cast<std::size_t>(rows) * out, 0.0),
        dx(static_cast<std::size_t>(rows) * in, 0.0),
        dw(static_cast<std::size_t>(in) * out, 0.0),
        db(out, 0.0) {
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < out; ++j) {
        double sum = b[j];
        for (int k = 0; k < in; ++k) sum += x[i * in + k] * w[k * out + j];
        y[i * out + j] = sum;
        db[j] += dy[i * out + j];
        for (int k = 0; k < in; ++k) {
          dx[i * in + k] += dy[i * out + j] * w[k * out + j];
          dw[k * out + j] += x[i * in + k] * dy[i * out + j];
        }
      }
  }
};

// Columns [first, first + count) of a row-major [rows, cols] matrix.
std::vector<double> columns(const std::vector<double>& m, int rows, int cols, int first,
                            int count) {
  std::vector<double> out;
  for (int i = 0; i < rows; ++i)
    for (int j = first; j < first + count; ++j) out.push_back(m[i * cols + j]);
  return out;
}

// Rows [first, first + count) of a row-major [rows, cols] matrix.
std::vector<double> rows_of(const std::vector<double>& m, int cols, int first, int count) {
  return {m.begin() + static_cast<std::ptrdiff_t>(first) * cols,
          m.begin() + static_cast<std::ptrdiff_t>(first + count) * cols};
}

std::string label(int t, int r, SequenceParallel sp) {
  return "rank " + std::to_string(r) + " of " + std::to_string(t) + ", sequence parallelism " +
         sequence_parallel_name(sp);
}

EXERCISE_TEST("tp.column_parallel_linear", ColumnParallelLinear, RanksComputeTheirColumns) {
  const WholeLinear whole(8, 5, 12, 11);  // 8 rows, 5 inputs, 12 outputs: 12, 6 or 3 per rank
  for (int t : {1, 2, 4})
    for (SequenceParallel sp : {SequenceParallel::kOff, SequenceParallel::kOn}) {
      std::vector<std::vector<double>> dx(t);
      coll::run_ranks(t, [&](coll::Communicator& comm) {
        const int r = comm.rank(), cols = whole.out / t;
        SCOPED_TRACE(label(t, r, sp));
        TensorParallelGroup<double> group(comm);
        const std::vector<double> w = columns(whole.w, whole.in, whole.out, r * cols, cols);
        const std::vector<double> b(whole.b.begin() + r * cols, whole.b.begin() + (r + 1) * cols);
        const LinearShard<double> shard{w.data(), b.data(), whole.in, cols};
        std::vector<double> y(static_cast<std::size_t>(whole.rows) * cols, kNaN);
        column_parallel_linear_forward(shard, whole.x.data(), whole.rows, y.data());
        expect_close("y, this rank's columns",
                     columns(whole.y, whole.rows, whole.out, r * cols, cols), y, kTolerance);
        EXPECT_EQ(group.counts().calls(), 0) << "f's forward is the identity: nothing moves";

        // Gradients are added: start them from known values.
        std::vector<double> dw = random_vector(w.size(), 40 + r), db = random_vector(cols, 50 + r);
        std::vector<double> dw_want = dw, db_want = db;
        const auto dw_cols = columns(whole.dw, whole.in, whole.out, r * cols, cols);
        for (std::size_t i = 0; i < dw.size(); ++i) dw_want[i] += dw_cols[i];
        for (int j = 0; j < cols; ++j) db_want[j] += whole.db[r * cols + j];
        const std::vector<double> dy = columns(whole.dy, whole.rows, whole.out, r * cols, cols);
        dx[r].assign(whole.x.size(), kNaN);
        column_parallel_linear_backward(shard, {dw.data(), db.data()}, whole.x.data(), dy.data(),
                                        whole.rows, dx[r].data(), group, sp);
        expect_close("dW, this rank's columns", dw_want, dw, kTolerance);
        expect_close("db, this rank's columns", db_want, db, kTolerance);
        const CollectiveCounts counts = group.counts();
        if (sp == SequenceParallel::kOff) {
          expect_close("dx after f's all-reduce", whole.dx, dx[r], kTolerance);
          EXPECT_EQ(counts.all_reduces, 1) << "f's backward: one all-reduce";
          EXPECT_EQ(counts.all_reduce_elements, whole.x.size()) << "of the whole dx";
          EXPECT_EQ(counts.calls(), 1);
        } else {
          EXPECT_EQ(counts.calls(), 0)
              << "with sequence parallelism dx stays partial (the gather's conjugate sums it)";
        }
      });
      if (sp == SequenceParallel::kOn) {  // the partial dx of all ranks sum to the whole
        std::vector<double> sum(whole.x.size(), 0.0);
        for (int r = 0; r < t; ++r)
          for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += dx[r][i];
        expect_close("Σ over ranks of the partial dx (t = " + std::to_string(t) + ")", whole.dx,
                     sum, kTolerance);
      }
    }
}

EXERCISE_TEST("tp.row_parallel_linear", RowParallelLinear, RanksSumTheirRowsOnce) {
  const WholeLinear whole(8, 12, 7, 21);  // 8 rows, 12 inputs (12, 6 or 3 per rank), 7 outputs
  for (int t : {1, 2, 4})
    for (SequenceParallel sp : {SequenceParallel::kOff, SequenceParallel::kOn}) {
      std::vector<std::vector<double>> db_of(t);
      coll::run_ranks(t, [&](coll::Communicator& comm) {
        const int r = comm.rank(), in = whole.in / t, held = whole.rows / t;
        const bool on = sp == SequenceParallel::kOn;
        SCOPED_TRACE(label(t, r, sp));
        TensorParallelGroup<double> group(comm);
        const std::vector<double> w = rows_of(whole.w, whole.out, r * in, in);
        const std::vector<double> x = columns(whole.x, whole.rows, whole.in, r * in, in);
        const LinearShard<double> shard{w.data(), whole.b.data(), in, whole.out};
        std::vector<double> partial(static_cast<std::size_t>(whole.rows) * whole.out, kNaN);
        std::vector<double> y((on ? held : whole.rows) * static_cast<std::size_t>(whole.out), kNaN);
        row_parallel_linear_forward(shard, x.data(), whole.rows, partial.data(), y.data(), group,
                                    sp);
        expect_close(on ? "y, this rank's rows" : "y, whole on every rank",
                     on ? rows_of(whole.y, whole.out, r * held, held) : whole.y, y, kTolerance);
        const std::size_t whole_y = whole.y.size();
        if (on) {
          EXPECT_EQ(group.counts().reduce_scatters, 1) << "the scatter: one reduce-scatter";
          EXPECT_EQ(group.counts().reduce_scatter_elements, whole_y);
        } else {
          EXPECT_EQ(group.counts().all_reduces, 1) << "g: one all-reduce";
          EXPECT_EQ(group.counts().all_reduce_elements, whole_y) << "of exactly rows × out";
        }
        EXPECT_EQ(group.counts().calls(), 1);

        group.reset_counts();
        std::vector<double> dw = random_vector(w.size(), 60 + r), db = random_vector(7, 70);
        std::vector<double> dw_want = dw;
        const auto dw_rows = rows_of(whole.dw, whole.out, r * in, in);
        for (std::size_t i = 0; i < dw.size(); ++i) dw_want[i] += dw_rows[i];
        const std::vector<double> db_start = db;
        const std::vector<double> dy = on ? rows_of(whole.dy, whole.out, r * held, held) : whole.dy;
        std::vector<double> dy_whole(on ? whole_y : 0, kNaN), dx(x.size(), kNaN);
        row_parallel_linear_backward(shard, {dw.data(), db.data()}, x.data(), dy.data(), whole.rows,
                                     dy_whole.data(), dx.data(), group, sp);
        expect_close("dx, this rank's columns", columns(whole.dx, whole.rows, whole.in, r * in, in),
                     dx, kTolerance);
        expect_close("dW, this rank's rows", dw_want, dw, kTolerance);
        for (int j = 0; j < whole.out; ++j) db[j] -= db_start[j];
        db_of[r] = db;
        if (on) {
          EXPECT_EQ(group.counts().all_gathers, 1) << "the scatter's conjugate: one all-gather";
          EXPECT_EQ(group.counts().all_gather_elements, whole_y);
        }
        EXPECT_EQ(group.counts().calls(), on ? 1 : 0) << "g's backward is the identity";
      });
      // db: the whole Σ dy on every rank (off), or partial sums over each rank's rows (on).
      std::vector<double> sum(whole.out, 0.0);
      for (int r = 0; r < t; ++r) {
        if (sp == SequenceParallel::kOff)
          expect_close("db on rank " + std::to_string(r), whole.db, db_of[r], kTolerance);
        for (int j = 0; j < whole.out; ++j) sum[j] += db_of[r][j];
      }
      if (sp == SequenceParallel::kOn)
        expect_close("Σ over ranks of the partial db", whole.db, sum, kTolerance);
    }
}

}  // namespace
}  // namespace book::tp
