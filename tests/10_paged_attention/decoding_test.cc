// Tests of greedy decoding with a KV cache (on the reference exercise bodies): chapter 4's trained
// addition model (the BUILD trains it) answers held-out sums the same way with the paged cache,
// the contiguous cache and the full forward pass, and gets them right; a larger random model
// decodes longer sequences with chunked prefill; running out of blocks leaves nothing behind.
#include <gtest/gtest.h>

#include <vector>

#include "chapters/04_training_baseline/data.h"
#include "chapters/10_paged_attention/decoding.h"
#include "chapters/10_paged_attention/served_model.h"
#include "common/rng.h"
#include "common/testing/expect_error.h"

namespace book::kv {
namespace {

using book::testing::expect_error;

const std::string kCheckpoint = "chapters/10_paged_attention/addition_checkpoint.bin";

TEST(Decoding, TheTrainedAdditionModelAnswersTheSameWithEveryCacheAndGetsThemRight) {
  auto model = load_checkpoint_model(runfile(kCheckpoint));
  const train::Config& config = model->config();
  const train::AdditionTask task(addition_digits(config));
  Rng rng(77);
  std::vector<std::vector<int>> prompts;
  std::vector<std::int64_t> sums;
  for (int i = 0; i < 200; ++i) {
    const auto [a, b] = task.sample(rng, train::Split::kValidation);  // never trained on
    auto tokens = task.encode(a, b);
    tokens.resize(task.prompt_length());
    prompts.push_back(tokens);
    sums.push_back(a + b);
  }
  const int answer = task.answer_length();
  const auto full = generate_full_forward(*model, prompts, answer);
  int correct = 0;
  for (std::size_t i = 0; i < prompts.size(); ++i)
    correct += train::AdditionTask::decode_answer(full[i].data(), answer) == sums[i];
  EXPECT_GE(correct, 190) << "the checkpoint got " << correct << " of 200 held-out sums right "
                          << "(chapter 4's tour run reaches 100%)";
  for (const int bs : {1, 3, 16}) {
    BlockManager manager(4096 / bs + 8, bs);
    PagedKvCache cache(kv_shape_of(config), manager.num_blocks(), bs);
    ModelRunner runner(*model, cache, 256);
    EXPECT_EQ(generate_paged(runner, manager, prompts, answer), full)
        << "block size " << bs << ": the paged cache must give the full forward pass's answers";
    EXPECT_EQ(manager.num_free_blocks(), manager.num_blocks()) << "every sequence was freed";
  }
  ContiguousKvCache contiguous(kv_shape_of(config), 200, config.context);
  ModelRunner runner(*model, contiguous.storage(), 256);
  EXPECT_EQ(generate_contiguous(runner, contiguous, prompts, answer), full);
  EXPECT_EQ(contiguous.in_use(), 0);
}

TEST(Decoding, ALargerRandomModelDecodesLongSequencesWithChunkedPrefill) {
  train::Config config;
  config.vocab_size = 64;
  config.context = 400;
  config.n_layer = 2;
  config.n_head = 4;
  config.d_model = 64;
  auto model = random_model(config, 21);
  Rng rng(22);
  std::vector<std::vector<int>> prompts;
  for (const int len : {300, 7, 129}) {
    std::vector<int> p(len);
    for (int& t : p) t = static_cast<int>(rng.uniform_int(0, 63));
    prompts.push_back(p);
  }
  BlockManager manager(200, 16);
  PagedKvCache cache(kv_shape_of(config), 200, 16);
  ModelRunner runner(*model, cache, 64);  // the 300-token prompt takes five prefill steps
  const auto paged = generate_paged(runner, manager, prompts, 40);
  ContiguousKvCache contiguous(kv_shape_of(config), 3, config.context);
  ModelRunner contiguous_runner(*model, contiguous.storage(), 512);  // whole prompts at once
  EXPECT_EQ(generate_contiguous(contiguous_runner, contiguous, prompts, 40), paged);
  EXPECT_EQ(generate_full_forward(*model, prompts, 40), paged)
      << "greedy tokens from the cache must be the full forward pass's";
}

TEST(Decoding, RunningOutOfBlocksIsReportedAndLeavesNothingBehind) {
  train::Config config;
  config.vocab_size = 16;
  config.context = 64;
  config.n_layer = 1;
  config.n_head = 2;
  config.d_model = 8;
  auto model = random_model(config, 31);
  BlockManager manager(5, 4);
  PagedKvCache cache(kv_shape_of(config), 5, 4);
  ModelRunner runner(*model, cache, 64);
  const std::vector<std::vector<int>> prompts = {std::vector<int>(10, 1), std::vector<int>(6, 2)};
  expect_error([&] { generate_paged(runner, manager, prompts, 8); },
               {"out of KV blocks", "no scheduler"});
  EXPECT_EQ(manager.num_free_blocks(), 5) << "the admitted sequences were freed";
  EXPECT_TRUE(manager.sequences().empty());
  const std::vector<std::vector<int>> too_long = {std::vector<int>(60, 1)};
  expect_error([&] { generate_paged(runner, manager, too_long, 10); },
               "longer than the model's context of 64 positions");
  ContiguousKvCache contiguous(kv_shape_of(config), 1, 64);
  ModelRunner contiguous_runner(*model, contiguous.storage(), 64);
  expect_error([&] { generate_contiguous(contiguous_runner, contiguous, prompts, 2); },
               "2 prompts, but the cache has 1 slots");
  EXPECT_EQ(contiguous.in_use(), 0);
}

}  // namespace
}  // namespace book::kv
