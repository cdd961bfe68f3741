// bazel run -c opt //chapters/13_disaggregation_speculation:bench
//
// Plain against speculative decoding in one run: the trained addition target answering 50
// held-out sums alone (greedy) and with the trained draft at gamma 1 and 4 and the self draft at
// gamma 1; then the claim speculation rests on, on a target larger than the last-level cache
// (random weights, 4 layers of 1024: 204 MB): one target step of gamma + 1 rows costs about what
// a step of one row costs. Medians of 5 repetitions run in a random
// interleaved order (common/benchmark_main's defaults).
#include <benchmark/benchmark.h>

#include <filesystem>
#include <string>
#include <vector>

#include "chapters/01_gemm_cpu/sgemm.h"
#include "chapters/04_training_baseline/data.h"
#include "chapters/10_paged_attention/served_model.h"
#include "chapters/13_disaggregation_speculation/spec_decoder.h"
#include "common/rng.h"

namespace {

using namespace book;
using namespace book::spec;

// The checkpoints, whether run by `bazel run` or from bazel-bin (no argv here: the binary's path).
std::string data(const std::string& path) {
  return kv::runfile(path, std::filesystem::read_symlink("/proc/self/exe").string());
}

struct Pair {
  ModelStack target, draft, self;
  std::vector<std::vector<int>> prompts;
  int answer = 0;
  Pair()
      : target(make_stack(
            kv::load_checkpoint_model(data("chapters/10_paged_attention/addition_checkpoint.bin")),
            256, 4, 16)),
        draft(make_stack(kv::load_checkpoint_model(
                             data("chapters/13_disaggregation_speculation/draft_checkpoint.bin")),
                         256, 4, 16)),
        self(make_stack(self_draft(*target.model, 1), 256, 4, 16)) {
    const train::AdditionTask task(kv::addition_digits(target.model->config()));
    answer = task.answer_length();
    Rng rng(2026);
    for (int i = 0; i < 50; ++i) {
      const auto [a, b] = task.sample(rng, train::Split::kValidation);
      auto tokens = task.encode(a, b);
      tokens.resize(task.prompt_length());
      prompts.push_back(tokens);
    }
  }
};

Pair& pair() {
  static Pair p;
  return p;
}

void BM_AdditionPlain(benchmark::State& state) {
  const gemm::SgemmThreads one_thread(1);
  Pair& p = pair();
  for (auto _ : state)
    for (std::size_t i = 0; i < p.prompts.size(); ++i)
      benchmark::DoNotOptimize(plain_greedy(p.target.served(), p.prompts[i], p.answer, 0));
}

// Arguments: gamma, draft (0 trained, 1 self).
void BM_AdditionSpeculative(benchmark::State& state) {
  const gemm::SgemmThreads one_thread(1);
  Pair& p = pair();
  ModelStack& draft = state.range(1) == 0 ? p.draft : p.self;
  SpeculativeDecoder decoder(p.target.served(), draft.served(),
                             {.gamma = static_cast<int>(state.range(0))});
  for (auto _ : state)
    for (std::size_t i = 0; i < p.prompts.size(); ++i)
      benchmark::DoNotOptimize(decoder.generate(p.prompts[i], p.answer, 0));
}

ModelStack& big_target() {
  static ModelStack stack = [] {
    train::Config c;
    c.vocab_size = 512, c.context = 64, c.n_layer = 4, c.d_model = 1024, c.n_head = 16;
    return make_stack(kv::random_model(c, 7), 4, 16, 16);
  }();
  return stack;
}

// Argument: rows (1: a plain decode step; gamma + 1: a verification pass).
void BM_BigTargetStep(benchmark::State& state) {
  const gemm::SgemmThreads all_threads(0);
  ModelStack& target = big_target();
  const std::vector<int> tokens(state.range(0), 3);
  const std::vector<kv::BlockId> table{0};
  const kv::SequenceChunk chunk{tokens, 0, table, true};
  for (auto _ : state) benchmark::DoNotOptimize(target.runner->run(std::span(&chunk, 1)));
}

BENCHMARK(BM_AdditionPlain)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AdditionSpeculative)
    ->ArgNames({"gamma", "self"})
    ->Args({1, 0})
    ->Args({4, 0})
    ->Args({1, 1})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BigTargetStep)
    ->ArgName("rows")
    ->Arg(1)
    ->Arg(2)
    ->Arg(5)
    ->Arg(9)
    ->Unit(benchmark::kMillisecond);

}  // namespace
