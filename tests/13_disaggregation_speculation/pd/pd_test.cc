// Exercise pd.kv_transfer inside the whole system: chapter 4's trained addition model served by a
// prefill pool and a decode pool (chapter-11 engines on chapter 3's thread ranks) answers token
// for token as one colocated engine does; the KV bytes sent per request are the formula's exactly;
// a decode worker out of blocks keeps its requests waiting (and preempts), never loses one.
#include <gtest/gtest.h>

#include <vector>

#include "chapters/04_training_baseline/data.h"
#include "chapters/10_paged_attention/served_model.h"
#include "chapters/13_disaggregation_speculation/pd/disaggregated.h"
#include "common/rng.h"
#include "common/testing/exercise.h"

namespace book::pd {
namespace {

const std::string kCheckpoint = "chapters/10_paged_attention/addition_checkpoint.bin";

struct Sums {
  std::unique_ptr<train::Model<float>> model = kv::load_checkpoint_model(kv::runfile(kCheckpoint));
  train::AdditionTask task{kv::addition_digits(model->config())};
  std::vector<std::int64_t> sums;

  // `n` held-out sums "a+b=" asking for the whole answer; arrivals spread over `spread_ms`.
  std::vector<TimedGeneration> requests(int n, std::uint64_t seed, double spread_ms = 0) {
    Rng rng(seed);
    std::vector<TimedGeneration> out;
    for (int i = 0; i < n; ++i) {
      const auto [a, b] = task.sample(rng, train::Split::kValidation);
      std::vector<int> prompt = task.encode(a, b);
      prompt.resize(task.prompt_length());
      TimedGeneration g;
      g.request.prompt = prompt;
      g.request.max_tokens = task.answer_length();
      g.arrival_ms = spread_ms * i / n;
      out.push_back(g);
      sums.push_back(a + b);
    }
    return out;
  }
};

WorkerConfig roomy() {
  WorkerConfig w;
  w.kv_blocks = 64;
  w.block_size = 4;
  w.scheduler = {8, 64, true};
  return w;
}

EXERCISE_TEST("pd.kv_transfer", Disaggregation, AnswersTokenForTokenAsTheColocatedEngine) {
  Sums s;
  const auto requests = s.requests(24, 5, /*spread_ms=*/20);
  const PdResult colocated = serve_colocated(*s.model, requests, roomy());
  for (const auto& [p, d] : {std::pair{1, 1}, {2, 2}, {1, 3}}) {
    PdConfig config;
    config.prefill_workers = p;
    config.decode_workers = d;
    config.prefill = config.decode = roomy();
    const PdResult split = serve_disaggregated(*s.model, requests, config);
    int correct = 0;
    for (std::size_t i = 0; i < requests.size(); ++i) {
      ASSERT_EQ(split.tokens[i], colocated.tokens[i])
          << p << "P+" << d << "D, request " << i << ": the decode worker must continue from the "
          << "received KV exactly where the colocated engine continues from its own";
      correct += train::AdditionTask::decode_answer(split.tokens[i].data(),
                                                    s.task.answer_length()) == s.sums[i];
    }
    EXPECT_GE(correct, 22) << "the trained model answers held-out sums right when split too";
  }
}

EXERCISE_TEST("pd.kv_transfer", Disaggregation, SendsExactlyTheFormulasBytesPerRequest) {
  Sums s;
  auto requests = s.requests(6, 9);
  // Prompts of several lengths: a prefix of the sum's prompt still asks for a continuation.
  for (std::size_t i = 0; i < requests.size(); ++i) {
    requests[i].request.prompt.resize(2 + i % 5);
    requests[i].request.max_tokens = 2;
  }
  PdConfig config;
  config.prefill = config.decode = roomy();
  const PdResult split = serve_disaggregated(*s.model, requests, config);
  const train::Config& c = s.model->config();
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const std::int64_t prompt = static_cast<std::int64_t>(requests[i].request.prompt.size());
    const std::int64_t formula =
        2 * c.n_layer * c.n_head * (c.d_model / c.n_head) * prompt * sizeof(float);
    EXPECT_EQ(split.kv_bytes[i], formula)
        << "request " << i << ": 2 · " << c.n_layer << " layers · " << c.n_head << " heads · "
        << c.d_model / c.n_head << " head_dim · " << prompt << " tokens · 4 bytes";
    EXPECT_EQ(split.bytes_sent[i], formula + 7 * 4 + prompt * 4)
        << "request " << i << ": the KV plus a 7-int32 header and the prompt's int32 ids";
  }
}

EXERCISE_TEST("pd.kv_transfer", Disaggregation,
              ADecodeWorkerOutOfBlocksMakesRequestsWaitNeverLost) {
  Sums s;
  const auto requests = s.requests(12, 13);
  const PdResult colocated = serve_colocated(*s.model, requests, roomy());
  PdConfig config;
  config.prefill = roomy();
  // Block size 2: a request holds 3 blocks after its prompt and grows to 4. Seven blocks admit
  // two at once, and the two cannot both grow: the second waits in the inbox, or is preempted.
  config.decode = roomy();
  config.decode.block_size = 2;
  config.decode.kv_blocks = 7;
  config.decode_waits_for = 12;  // all twelve contend for the seven blocks, on every run
  const PdResult split = serve_disaggregated(*s.model, requests, config);
  for (std::size_t i = 0; i < requests.size(); ++i)
    EXPECT_EQ(split.tokens[i], colocated.tokens[i]) << "request " << i << " lost or changed";
  EXPECT_GT(split.admit_retries, 0) << "some transfer had to wait for blocks";
  EXPECT_GT(split.max_inbox, 0);
  EXPECT_GT(split.decode_preemptions, 0)
      << "two admitted requests outgrow seven blocks: the decode side preempts (recompute)";
}

EXERCISE_TEST("pd.kv_transfer", Disaggregation, ADecodeWorkersPrefixCacheHitsKeepTheirOwnKv) {
  Sums s;
  auto requests = s.requests(10, 17);
  // Five prompts, each twice: the second copy finds the first's full blocks in the decode
  // worker's prefix cache and rebuilds only the positions after them (unpack_kv's `first`).
  for (std::size_t i = 5; i < requests.size(); ++i) requests[i].request = requests[i - 5].request;
  const PdResult colocated = serve_colocated(*s.model, requests, roomy());
  PdConfig config;
  config.prefill = config.decode = roomy();
  config.decode.block_size = 2;
  config.decode.prefix_caching = true;
  const PdResult split = serve_disaggregated(*s.model, requests, config);
  for (std::size_t i = 0; i < requests.size(); ++i)
    EXPECT_EQ(split.tokens[i], colocated.tokens[i]) << "request " << i;
  EXPECT_GT(split.decode_prefix_hits, 0) << "the repeated prompts hit the decode prefix cache";
}

}  // namespace
}  // namespace book::pd
