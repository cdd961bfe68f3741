#include "chapters/04_training_baseline/data.h"

#include "common/check.h"

namespace book::train {

AdditionTask::AdditionTask(int digits) : digits_(digits), limit_(1) {
  BOOK_CHECK(digits >= 1 && digits <= 6, "AdditionTask: digits must be 1..6, got " << digits);
  for (int i = 0; i < digits; ++i) limit_ *= 10;
}

std::vector<int> AdditionTask::encode(std::int64_t a, std::int64_t b) const {
  BOOK_CHECK(0 <= a && a < limit_ && 0 <= b && b < limit_,
             "AdditionTask::encode: operands must be in 0.." << limit_ - 1 << ", got " << a
                                                             << " and " << b);
  std::vector<int> tokens;
  auto put_number = [&](std::int64_t x) {  // most significant digit first, zero-padded
    std::vector<int> digits(digits_);
    for (int i = digits_ - 1; i >= 0; --i, x /= 10) digits[i] = static_cast<int>(x % 10);
    tokens.insert(tokens.end(), digits.begin(), digits.end());
  };
  put_number(a);
  tokens.push_back(10);
  put_number(b);
  tokens.push_back(11);
  std::int64_t sum = a + b;
  for (int i = 0; i < answer_length(); ++i, sum /= 10) tokens.push_back(static_cast<int>(sum % 10));
  return tokens;
}

std::string AdditionTask::to_text(const std::vector<int>& tokens) {
  std::string text;
  for (int t : tokens)
    text += t < 10 ? static_cast<char>('0' + t) : t == 10 ? '+' : t == 11 ? '=' : '?';
  return text;
}

bool AdditionTask::is_validation(std::int64_t a, std::int64_t b) const {
  std::uint64_t h = static_cast<std::uint64_t>(a) * 0x9e3779b97f4a7c15ULL ^
                    static_cast<std::uint64_t>(b) * 0xc2b2ae3d27d4eb4fULL;
  h ^= h >> 31;
  h *= 0xbf58476d1ce4e5b9ULL;
  h ^= h >> 29;
  return h % 10 == 0;
}

std::pair<std::int64_t, std::int64_t> AdditionTask::sample(Rng& rng, Split split) const {
  const bool want_validation = split == Split::kValidation;
  while (true) {  // rejection: about 10 draws per validation pair, 1.1 per training pair
    const std::int64_t a = rng.uniform_int(0, limit_ - 1), b = rng.uniform_int(0, limit_ - 1);
    if (is_validation(a, b) == want_validation) return {a, b};
  }
}

Batch AdditionTask::batch(Rng& rng, Split split, int batch) const {
  BOOK_CHECK(batch >= 1, "AdditionTask::batch: batch must be >= 1, got " << batch);
  Batch out{batch, model_context(), {}, {}};
  for (int i = 0; i < batch; ++i) {
    const auto [a, b] = sample(rng, split);
    const auto seq = encode(a, b);
    for (int t = 0; t < model_context(); ++t) {
      out.tokens.push_back(seq[t]);
      // Position t predicts token t+1; only the answer's tokens are graded (the operands are
      // random, so their loss could never fall below ln 10 and would hide the learning).
      out.targets.push_back(t + 1 >= prompt_length() ? seq[t + 1] : -1);
    }
  }
  return out;
}

std::int64_t AdditionTask::decode_answer(const int* answer_tokens, int count) {
  std::int64_t value = 0;
  for (int i = count - 1; i >= 0; --i) {
    if (answer_tokens[i] < 0 || answer_tokens[i] > 9) return -1;
    value = value * 10 + answer_tokens[i];
  }
  return value;
}

}  // namespace book::train
