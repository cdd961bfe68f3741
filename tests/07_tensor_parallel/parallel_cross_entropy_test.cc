// Graded test of tp.parallel_cross_entropy: t = 1, 2, 3 and 4 thread ranks, each with its
// columns of the logits, get the loss of the whole softmax cross-entropy (the same on every
// rank), their columns of its probabilities and of its gradient — against long-double loops,
// tolerance 1e-12 — while moving only the row maxima (an all-gather of rows per rank) and 2·rows
// sums (one all-reduce), never the rows × V logits; and stay finite with logits in the thousands.
#include <cmath>
#include <string>
#include <vector>

#include "chapters/03_collectives/threads.h"
#include "chapters/07_tensor_parallel/parallel_cross_entropy.h"
#include "chapters/07_tensor_parallel/tensor_parallel_group.h"
#include "common/testing/exercise.h"
#include "common/testing/expect_error.h"
#include "tests/07_tensor_parallel/tp_testing.h"

namespace book::tp {
namespace {

using testing::expect_close;
using testing::kNaN;
using testing::random_vector;

constexpr double kTolerance = 1e-12;

struct WholeLoss {
  double loss = 0;
  std::vector<double> probs, dlogits;
};

// Softmax cross-entropy of logits [rows, vocab] in long double; the gradient with `scale`.
WholeLoss whole_loss(const std::vector<double>& logits, const std::vector<int>& targets, int rows,
                     int vocab, double scale) {
  WholeLoss out;
  out.probs.resize(logits.size());
  out.dlogits.assign(logits.size(), 0.0);
  long double total = 0;
  int counted = 0;
  for (int i = 0; i < rows; ++i) counted += targets[i] >= 0;
  for (int i = 0; i < rows; ++i) {
    long double top = logits[i * vocab], sum = 0;
    for (int v = 0; v < vocab; ++v) top = std::max<long double>(top, logits[i * vocab + v]);
    for (int v = 0; v < vocab; ++v)
      sum += std::exp(static_cast<long double>(logits[i * vocab + v]) - top);
    for (int v = 0; v < vocab; ++v) {
      const long double p = std::exp(static_cast<long double>(logits[i * vocab + v]) - top) / sum;
      out.probs[i * vocab + v] = static_cast<double>(p);
      if (targets[i] >= 0)
        out.dlogits[i * vocab + v] =
            static_cast<double>(scale * (p - (v == targets[i] ? 1.0L : 0.0L)) / counted);
    }
    if (targets[i] >= 0) total += std::log(sum) - (logits[i * vocab + targets[i]] - top);
  }
  out.loss = static_cast<double>(total / counted);
  return out;
}

void check(int rows, int vocab, double offset, std::uint64_t seed) {
  std::vector<double> logits = random_vector(static_cast<std::size_t>(rows) * vocab, seed, -3, 3);
  for (auto& z : logits) z += offset;
  std::vector<int> targets(rows);
  for (int i = 0; i < rows; ++i) targets[i] = i % 3 == 1 ? -1 : (i * 5 + 2) % vocab;
  const double scale = 0.75;
  const WholeLoss want = whole_loss(logits, targets, rows, vocab, scale);
  for (int t : {1, 2, 3, 4}) {
    coll::run_ranks(t, [&](coll::Communicator& comm) {
      const int r = comm.rank(), local = vocab / t, begin = r * local;
      SCOPED_TRACE("rank " + std::to_string(r) + " of " + std::to_string(t) + ", logits around " +
                   std::to_string(offset));
      TensorParallelGroup<double> group(comm);
      std::vector<double> mine, probs_want, dlogits_want;
      for (int i = 0; i < rows; ++i)
        for (int v = begin; v < begin + local; ++v) {
          mine.push_back(logits[i * vocab + v]);
          probs_want.push_back(want.probs[i * vocab + v]);
          dlogits_want.push_back(want.dlogits[i * vocab + v]);
        }
      std::vector<double> probs(mine.size(), kNaN), dlogits(mine.size(), kNaN);
      std::vector<double> scratch(static_cast<std::size_t>(rows) * (t + 3), kNaN);
      const double loss = parallel_cross_entropy_forward(
          mine.data(), targets.data(), rows, local, begin, probs.data(), scratch.data(), group);
      EXPECT_NEAR(loss, want.loss, kTolerance * std::max(1.0, want.loss)) << "the mean loss";
      expect_close("this rank's columns of the softmax", probs_want, probs, kTolerance);
      const CollectiveCounts counts = group.counts();
      EXPECT_EQ(counts.all_gathers, 1) << "the row maxima";
      EXPECT_EQ(counts.all_gather_elements, static_cast<std::uint64_t>(rows) * t);
      EXPECT_EQ(counts.all_reduces, 1) << "Σ exp and the target logit, together";
      EXPECT_EQ(counts.all_reduce_elements, 2u * rows) << "2 numbers per row, not V";
      EXPECT_EQ(counts.calls(), 2);
      parallel_cross_entropy_backward(probs.data(), targets.data(), rows, local, begin, scale,
                                      dlogits.data());
      expect_close("this rank's columns of dlogits", dlogits_want, dlogits, kTolerance);
      EXPECT_EQ(group.counts().calls(), 2) << "the backward pass moves nothing";
    });
  }
}

EXERCISE_TEST("tp.parallel_cross_entropy", ParallelCrossEntropy, MatchesTheWholeSoftmax) {
  check(7, 12, 0.0, 5);  // 7 rows (some ignored), 12 tokens: 12, 6, 4 or 3 per rank
}

EXERCISE_TEST("tp.parallel_cross_entropy", ParallelCrossEntropy, StaysFiniteForLargeLogits) {
  check(5, 24, 3000.0, 6);  // exp(3000) overflows: only the global maximum keeps it finite
}

// A target outside the vocabulary (12 ids over 2 ranks here) was on no rank: its row counted
// log Σ exp as its loss without an error. Refused on every rank before communicating.
EXERCISE_TEST("tp.parallel_cross_entropy", ParallelCrossEntropy,
              RefusesTargetsOutsideTheVocabulary) {
  coll::run_ranks(2, [](coll::Communicator& comm) {
    TensorParallelGroup<double> group(comm);
    const int rows = 3, vocab_local = 6;
    const std::vector<double> logits = random_vector(rows * vocab_local, 9 + comm.rank(), -3, 3);
    std::vector<double> probs(rows * vocab_local), scratch(rows * (2 + 3));
    for (int bad : {12, -2}) {
      const std::vector<int> targets = {3, bad, -1};
      book::testing::expect_error(
          [&] {
            parallel_cross_entropy_forward(logits.data(), targets.data(), rows, vocab_local,
                                           comm.rank() * vocab_local, probs.data(), scratch.data(),
                                           group);
          },
          {"row 1's target is " + std::to_string(bad), "12-token vocabulary"});
    }
  });
}

}  // namespace
}  // namespace book::tp
