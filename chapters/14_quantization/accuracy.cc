#include "chapters/14_quantization/accuracy.h"

#include <algorithm>
#include <cmath>

#include "chapters/04_training_baseline/data.h"
#include "chapters/10_paged_attention/decoding.h"
#include "chapters/14_quantization/quant.h"
#include "common/check.h"
#include "common/rng.h"

namespace book::quant {

EvalSet make_eval_set(const train::Config& config, int count, std::uint64_t seed) {
  EvalSet set{kv::held_out_additions(config, count, seed), {}};
  const train::AdditionTask task(kv::addition_digits(config));
  // The problems again with their answers: the same draws, whole.
  Rng rng(seed);
  for (int i = 0; i < count; ++i) {
    const auto [a, b] = task.sample(rng, train::Split::kValidation);
    auto tokens = task.encode(a, b);
    tokens.resize(task.model_context());
    set.sequences.push_back(std::move(tokens));
  }
  return set;
}

std::vector<std::vector<int>> calibration_sequences(const train::Config& config, int count,
                                                    std::uint64_t seed) {
  BOOK_CHECK(count >= 1, "calibration_sequences: count " << count << " must be at least 1");
  const train::AdditionTask task(kv::addition_digits(config));
  Rng rng(seed);
  std::vector<std::vector<int>> sequences;
  for (int i = 0; i < count; ++i) {
    const auto [a, b] = task.sample(rng, train::Split::kTrain);
    auto tokens = task.encode(a, b);
    tokens.resize(task.model_context());
    sequences.push_back(std::move(tokens));
  }
  return sequences;
}

std::vector<float> teacher_forced_logits(train::Model<float>& model,
                                         std::span<const std::vector<int>> sequences,
                                         const kv::ModelRunner::LayerLinear& linear) {
  const train::Config& config = model.config();
  const int batch = 64;
  for (std::size_t i = 0; i < sequences.size(); ++i)
    BOOK_CHECK(!sequences[i].empty() && static_cast<int>(sequences[i].size()) <= config.context,
               "teacher_forced_logits: sequence " << i << " has " << sequences[i].size()
                                                  << " tokens; 1 to " << config.context << " fit");
  kv::PagedKvCache cache(kv::kv_shape_of(config), batch, config.context);
  kv::ModelRunner runner(model, cache, batch * config.context);
  runner.use_linear(linear);
  std::vector<float> logits;
  std::vector<kv::BlockId> tables(batch);
  for (int b = 0; b < batch; ++b) tables[b] = b;
  for (std::size_t first = 0; first < sequences.size(); first += batch) {
    const std::size_t last = std::min(sequences.size(), first + batch);
    std::vector<kv::SequenceChunk> chunks;
    for (std::size_t i = first; i < last; ++i)
      chunks.push_back({sequences[i], 0, {&tables[i - first], 1}, true});
    const std::span<const float> out = runner.run(chunks);
    logits.insert(logits.end(), out.begin(), out.end());
  }
  return logits;
}

namespace {

// log-softmax of one row.
void log_softmax(const float* logits, int n, std::vector<double>& out) {
  const double m = *std::max_element(logits, logits + n);
  double sum = 0;
  for (int v = 0; v < n; ++v) sum += std::exp(logits[v] - m);
  const double log_sum = std::log(sum) + m;
  out.resize(n);
  for (int v = 0; v < n; ++v) out[v] = logits[v] - log_sum;
}

}  // namespace

Quality evaluate(train::Model<float>& model, const EvalSet& set,
                 const kv::ModelRunner::LayerLinear& linear, std::span<const float> reference) {
  const train::Config& config = model.config();
  const int vocab = config.vocab_size;
  const std::vector<float> logits = teacher_forced_logits(model, set.sequences, linear);
  BOOK_CHECK(reference.size() == logits.size(), "evaluate: the FP32 reference has "
                                                    << reference.size() << " logits, the held-out "
                                                    << "sequences need " << logits.size());
  check_finite(logits, "quantised logits");
  Quality q;
  const int answer = set.problems.answer_tokens;
  std::size_t row = 0;
  int positions = 0, agree = 0;
  std::vector<double> lp, lq;
  for (const auto& sequence : set.sequences) {
    const int n = static_cast<int>(sequence.size());
    for (int t = 0; t < n; ++t, ++row) {
      if (t < n - answer) continue;  // the answer positions: the last `answer` of the sequence
      const float* p = reference.data() + row * vocab;
      const float* r = logits.data() + row * vocab;
      log_softmax(p, vocab, lp);
      log_softmax(r, vocab, lq);
      double kl = 0;
      for (int v = 0; v < vocab; ++v) kl += std::exp(lp[v]) * (lp[v] - lq[v]);
      q.kl += kl;
      agree += kv::argmax({p, static_cast<std::size_t>(vocab)}) ==
               kv::argmax({r, static_cast<std::size_t>(vocab)});
      ++positions;
    }
  }
  q.kl /= positions;
  q.top1 = static_cast<double>(agree) / positions;
  // Greedy answers through the paged cache, graded.
  const int problems = static_cast<int>(set.problems.prompts.size());
  const int block_size = 4;
  const int blocks = problems * ((config.context + block_size - 1) / block_size);
  kv::BlockManager manager(blocks, block_size);
  kv::PagedKvCache cache(kv::kv_shape_of(config), blocks, block_size);
  kv::ModelRunner runner(model, cache, 512);
  runner.use_linear(linear);
  const auto answers = kv::generate_paged(runner, manager, set.problems.prompts, answer);
  q.problems = problems;
  q.correct = set.problems.count_correct(answers);
  return q;
}

}  // namespace book::quant
