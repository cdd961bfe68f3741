// Recomputation as chapter 4's activation policy (recomputation_policy.h): selective and full
// recomputation, with chapter 4's attention or with it behind the attention-kernel seam, on one
// device and on sequence-parallel tensor-parallel ranks, give exactly the gradients of the model
// that keeps everything, while the activations' bytes drop by what each mode stops keeping.
#include "chapters/09_memory_accounting/recomputation_policy.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "chapters/03_collectives/threads.h"
#include "chapters/04_training_baseline/model.h"
#include "chapters/04_training_baseline/step.h"
#include "chapters/07_tensor_parallel/tensor_parallel_group.h"
#include "chapters/07_tensor_parallel/tensor_parallel_seam.h"
#include "common/rng.h"
#include "common/testing/expect_error.h"
#include "tests/04_training_baseline/seam_testing.h"

namespace book::mem {
namespace {

using testing::MaterialisingKernel;
using testing::SeamRun;

TEST(RecomputationPolicy, KeepsGradientsBitForBitAndDropsWhatItDoesNotKeep) {
  const SeamRun plain = testing::run_tiny_seam({});
  const train::Config c = testing::tiny_seam_config();
  const std::size_t rows = 3 * 7, probs = rows * c.n_head * c.context * sizeof(double);
  const std::size_t block = train::BlockActivations<double>(c, {}, 3, 7).bytes();
  for (Recomputation mode :
       {Recomputation::kNone, Recomputation::kSelective, Recomputation::kFull}) {
    MaterialisingKernel kernel;
    for (const train::AttentionKernel<double>* k :
         {static_cast<const train::AttentionKernel<double>*>(nullptr),
          static_cast<const train::AttentionKernel<double>*>(&kernel)}) {
      train::ModelOptions<double> o;
      o.activation_policy = recomputation_policy<double>(mode);
      o.attention = k;
      const SeamRun r = testing::run_tiny_seam(o);
      EXPECT_EQ(std::memcmp(&r.loss, &plain.loss, sizeof(double)), 0)
          << recomputation_name(mode) << (k ? ", kernel" : "");
      ASSERT_EQ(r.grads.size(), plain.grads.size());
      EXPECT_EQ(std::memcmp(r.grads.data(), plain.grads.data(), r.grads.size() * sizeof(double)), 0)
          << recomputation_name(mode) << (k ? ", kernel" : "") << ": gradients differ";
      // Selective keeps one block's probabilities instead of three; full one block instead of
      // three (its probabilities included).
      const std::size_t dropped = mode == Recomputation::kNone        ? 0
                                  : mode == Recomputation::kSelective ? 2 * probs
                                                                      : 2 * block;
      EXPECT_EQ(r.activation_bytes, plain.activation_bytes - dropped) << recomputation_name(mode);
    }
    // The kernel ran once per block forward, again per block under recomputation, and backward.
    const int per_forward = 3;
    EXPECT_EQ(kernel.forwards, per_forward * (mode == Recomputation::kNone ? 1 : 2));
    EXPECT_EQ(kernel.backwards, 3);
  }
}

TEST(RecomputationPolicy, KeepsNoBlockWholeToSplit) {
  for (Recomputation mode : {Recomputation::kSelective, Recomputation::kFull}) {
    train::ModelOptions<double> o;
    o.activation_policy = recomputation_policy<double>(mode);
    train::Model<double> model(testing::tiny_seam_config(), 2, o);
    testing::expect_error([&] { model.activations().block(1); },
                          {"does not keep block 1", "ModelOptions::activation_policy"});
  }
}

TEST(RecomputationPolicy, OnATensorParallelRankKeepsItsGradientsBitForBit) {
  // The policies run through the rank's seam: selective and full recomputation on a
  // sequence-parallel rank give exactly the gradients of the run that keeps everything.
  train::Config config = testing::tiny_seam_config();
  config.vocab_size = 12;  // 2 ranks split the vocabulary
  train::Batch batch = testing::random_seam_batch(3, 6, 31);
  constexpr int kRanks = 2;
  coll::run_ranks(kRanks, [&](coll::Communicator& comm) {
    tp::TensorParallelGroup<double> group(comm);
    std::vector<std::vector<double>> grads;
    for (Recomputation mode :
         {Recomputation::kNone, Recomputation::kSelective, Recomputation::kFull}) {
      tp::TensorParallelSeam<double> seam(config, batch.batch, &group, tp::SequenceParallel::kOn);
      train::ModelOptions<double> options =
          tp::tensor_parallel_options<double>({0, -1, {comm.rank(), kRanks}}, seam);
      options.activation_policy = recomputation_policy<double>(mode);
      train::Model<double> model(config, batch.batch, options);
      model.init(32);
      model.zero_grad();
      train::forward_backward(model, batch, 1.0);
      model.finish_gradients();
      grads.emplace_back(model.grads().begin(), model.grads().end());
    }
    for (std::size_t m = 1; m < grads.size(); ++m)
      ASSERT_EQ(std::memcmp(grads[m].data(), grads[0].data(), grads[0].size() * sizeof(double)), 0)
          << "recomputation mode " << m << " changed rank " << comm.rank() << "'s gradients";
  });
}

}  // namespace
}  // namespace book::mem
