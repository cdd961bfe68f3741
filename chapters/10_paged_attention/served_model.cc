#include "chapters/10_paged_attention/served_model.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "chapters/04_training_baseline/data.h"
#include "chapters/04_training_baseline/trainer.h"
#include "common/check.h"
#include "common/rng.h"

namespace book::kv {

std::unique_ptr<train::Model<float>> load_checkpoint_model(const std::string& path) {
  const train::ModelWeights read = train::read_model_weights(path);
  auto model = std::make_unique<train::Model<float>>(read.config, 1);
  std::copy(read.weights.begin(), read.weights.end(), model->params().begin());
  return model;
}

std::unique_ptr<train::Model<float>> random_model(const train::Config& config, std::uint64_t seed) {
  auto model = std::make_unique<train::Model<float>>(config, 1);
  model->init(seed);
  return model;
}

int addition_digits(const train::Config& config) {
  const int digits = (config.context - 2) / 3;
  BOOK_CHECK(config.vocab_size == 12 && digits >= 1 && 3 * digits + 2 == config.context,
             "addition_digits: a model with vocabulary " << config.vocab_size << " and context "
                                                         << config.context
                                                         << " is not an addition model (those "
                                                            "have 12 tokens and 3·digits + 2 "
                                                            "positions)");
  return digits;
}

AdditionProblems held_out_additions(const train::Config& config, int count, std::uint64_t seed) {
  BOOK_CHECK(count >= 1, "held_out_additions: count " << count << " must be at least 1");
  const train::AdditionTask task(addition_digits(config));
  Rng rng(seed);
  AdditionProblems problems;
  problems.answer_tokens = task.answer_length();
  for (int i = 0; i < count; ++i) {
    const auto [a, b] = task.sample(rng, train::Split::kValidation);
    auto tokens = task.encode(a, b);
    tokens.resize(task.prompt_length());
    problems.prompts.push_back(std::move(tokens));
    problems.sums.push_back(a + b);
  }
  return problems;
}

int AdditionProblems::count_correct(std::span<const std::vector<int>> answers) const {
  BOOK_CHECK(answers.size() == sums.size(),
             "count_correct: " << answers.size() << " answers for " << sums.size() << " problems");
  int correct = 0;
  for (std::size_t i = 0; i < sums.size(); ++i) {
    BOOK_CHECK(static_cast<int>(answers[i].size()) >= answer_tokens,
               "count_correct: answer " << i << " has " << answers[i].size() << " tokens, needs "
                                        << answer_tokens);
    correct += train::AdditionTask::decode_answer(answers[i].data(), answer_tokens) == sums[i];
  }
  return correct;
}

std::string runfile(const std::string& path, const std::string& argv0) {
  namespace fs = std::filesystem;
  std::vector<fs::path> candidates = {path};
  const std::string workspace = "llm_infra_book";
  if (const char* dir = std::getenv("RUNFILES_DIR"))
    candidates.push_back(fs::path(dir) / workspace / path);
  if (!argv0.empty()) candidates.push_back(fs::path(argv0 + ".runfiles") / workspace / path);
  if (const char* dir = std::getenv("TEST_SRCDIR"))
    candidates.push_back(fs::path(dir) / workspace / path);
  for (const auto& candidate : candidates)
    if (fs::exists(candidate)) return candidate.string();
  return path;
}

}  // namespace book::kv
