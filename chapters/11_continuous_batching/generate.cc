// bazel run -c opt //chapters/11_continuous_batching:generate -- --sums 12+34,99+1,7+8
//     [--temperature T] [--top-k K] [--top-p P] [--seed N] [--stream] [--checkpoint FILE]
//
// The offline CLI: chapter 4's trained addition model served by this chapter's engine. Each sum
// is one request (continuous batching over all of them); with --stream every token is printed as
// it is sampled, tagged with its request. Greedy unless --temperature > 0 (then the answers may
// be wrong: sampling picks less likely digits on purpose).
#include <iostream>
#include <string>
#include <vector>

#include "chapters/04_training_baseline/data.h"
#include "chapters/10_paged_attention/served_model.h"
#include "chapters/11_continuous_batching/engine.h"
#include "common/check.h"
#include "common/flags.h"
#include "common/main.h"

namespace {

using namespace book;
using namespace book::serve;

// "12+34" -> (12, 34); a book::Error naming the text otherwise.
std::pair<std::int64_t, std::int64_t> parse_sum(const std::string& text, std::int64_t limit) {
  const auto plus = text.find('+');
  BOOK_CHECK(plus != std::string::npos && plus > 0 && plus + 1 < text.size() &&
                 text.find_first_not_of("0123456789+") == std::string::npos &&
                 text.find('+', plus + 1) == std::string::npos && plus <= 18 &&
                 text.size() - plus - 1 <= 18,
             "--sums: '" << text << "' is not a sum like 12+34");
  const std::int64_t a = std::stoll(text.substr(0, plus)), b = std::stoll(text.substr(plus + 1));
  BOOK_CHECK(a < limit && b < limit,
             "--sums: '" << text << "': this model adds numbers below " << limit);
  return {a, b};
}

int body(int argc, char** argv) {
  std::vector<std::string> sums = {"12+34", "99+1", "7+8"};
  SamplingParams sampling;
  std::int64_t seed = 0;
  bool stream = false;
  std::string checkpoint;
  Flags flags("generate", "chapter 4's addition model served by chapter 11's engine");
  flags.add("sums", &sums, "comma-separated sums to answer, like 12+34,99+1");
  flags.add("temperature", &sampling.temperature, "0: greedy").range(0, 100);
  flags.add("top-k", &sampling.top_k, "keep the k most likely tokens (0: all)").range(0, 1000);
  flags.add("top-p", &sampling.top_p, "nucleus: the fewest tokens reaching this mass")
      .range(1e-9, 1);
  flags.add("seed", &seed, "request i samples with seed + i").range(0, 1000000000);
  flags.add("stream", &stream, "print every token as it is sampled");
  flags.add("checkpoint", &checkpoint, "the checkpoint (default: the one chapter 10 trains)");
  flags.parse(argc, argv);
  BOOK_CHECK(!sums.empty() && sums.size() <= 10000, "--sums: give 1 to 10000 sums");
  if (checkpoint.empty())
    checkpoint = kv::runfile("chapters/10_paged_attention/addition_checkpoint.bin", argv[0]);
  auto model = kv::load_checkpoint_model(checkpoint);
  const train::AdditionTask task(kv::addition_digits(model->config()));
  std::int64_t limit = 1;
  for (int d = 0; d < task.digits(); ++d) limit *= 10;
  std::vector<std::vector<int>> prompts;
  for (const auto& text : sums) {
    const auto [a, b] = parse_sum(text, limit);
    auto tokens = task.encode(a, b);
    tokens.resize(task.prompt_length());
    prompts.push_back(tokens);
  }
  const int blocks = 1024, block_size = 4;
  kv::PagedKvCache cache(kv::kv_shape_of(model->config()), blocks, block_size);
  kv::ModelRunner runner(*model, cache, 256);
  kv::BlockManager manager(blocks, block_size, /*prefix_caching=*/false);
  Engine engine(runner, manager, {32, 256, true});
  if (stream)
    engine.on_token([&](RequestId id, int token, bool finished) {
      std::cout << "request " << id << " (" << sums[static_cast<std::size_t>(id)] << "): token "
                << train::AdditionTask::to_text({token}) << (finished ? " (done)" : "") << "\n";
    });
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    SamplingParams params = sampling;
    params.seed = static_cast<std::uint64_t>(seed) + i;
    engine.submit({prompts[i], task.answer_length(), params, {}});
  }
  const auto done = engine.run();
  for (const Completion& c : done) {
    const std::int64_t answer =
        train::AdditionTask::decode_answer(c.tokens.data(), static_cast<int>(c.tokens.size()));
    const auto [a, b] = parse_sum(sums[static_cast<std::size_t>(c.id)], limit);
    std::cout << sums[static_cast<std::size_t>(c.id)] << " = " << answer
              << (answer == a + b ? "" : "  (wrong: " + std::to_string(a + b) + ")")
              << "   [tokens " << train::AdditionTask::to_text(c.tokens)
              << ", least significant digit first]\n";
  }
  std::cout << done.size() << " requests in " << engine.steps() << " model steps\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return book::run_main(argc, argv, body); }
