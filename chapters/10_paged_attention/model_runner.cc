#include "chapters/10_paged_attention/model_runner.h"

#include <algorithm>

#include "chapters/04_training_baseline/layers.h"
#include "common/check.h"

namespace book::kv {

KvShape kv_shape_of(const train::Config& config) {
  config.validate();
  return {config.n_layer, config.n_head, config.head_size()};
}

namespace {

const train::Config& whole_model_config(const train::Model<float>& model) {
  BOOK_CHECK(model.part().is_whole(model.config()),
             "ModelRunner: serves a whole model on one device; this one holds layers "
                 << model.part().first_layer << ".." << model.part().last_layer - 1
                 << " of tensor-parallel slice " << model.part().tensor_parallel.rank << "/"
                 << model.part().tensor_parallel.size);
  return model.config();
}

int checked_rows(int max_rows) {
  BOOK_CHECK(max_rows >= 1, "ModelRunner: max_rows must be >= 1, got " << max_rows);
  return max_rows;
}

// Chapter 4's one-device seam with the projections the caller computes (use_linear): a block's
// four forward products read the caller's weights, one layer at a time; the rest is chapter 4's.
class CallerProjections final : public train::OneDevice<float> {
 public:
  explicit CallerProjections(const ModelRunner::LayerLinear& linear) : linear_(linear) {}
  int layer = 0;  ///< the block being run
  void column_forward(const train::ProjectionWeights<float>& p, const float* x, int rows,
                      float* y) override {
    linear_(layer, p.which, x, rows, y);
  }
  void row_forward(const train::ProjectionWeights<float>& p, const float* x, int rows,
                   float* y) override {
    linear_(layer, p.which, x, rows, y);
  }

 private:
  const ModelRunner::LayerLinear& linear_;
};

}  // namespace

ModelRunner::ModelRunner(train::Model<float>& model, PagedKvCache& cache, int max_rows,
                         AttentionKernel kernel, int threads)
    : config_(whole_model_config(model)),
      weights_(train::bind(model.layout(), model.params().data())),
      cache_(cache),
      max_rows_(checked_rows(max_rows)),
      kernel_(kernel),
      fast_(threads),
      acts_(config_, {}, 1, max_rows, nullptr, /*attention_probabilities=*/false),
      workspace_(config_, {}, 1, max_rows) {
  const KvShape want = kv_shape_of(config_), have = cache.shape();
  BOOK_CHECK(
      want.n_layer == have.n_layer && want.n_head == have.n_head && want.head_dim == have.head_dim,
      "ModelRunner: the cache is shaped for "
          << have.n_layer << " layers × " << have.n_head << " heads × " << have.head_dim
          << ", the model needs " << want.n_layer << " × " << want.n_head << " × "
          << want.head_dim);
  const std::size_t rows = max_rows, c = config_.d_model;
  stream_.resize(rows * c);
  next_stream_.resize(rows * c);
  head_in_.resize(rows * c);
  head_out_.resize(rows * c);
  mean_.resize(rows);
  rstd_.resize(rows);
  logits_.resize(rows * config_.vocab_size);
  row_chunk_.resize(rows);
  row_position_.resize(rows);
  queries_.resize(rows);
}

void ModelRunner::check(std::span<const SequenceChunk> chunks) const {
  BOOK_CHECK(cache_.precision() == KvPrecision::kF32 || attention_,
             "ModelRunner::run: the cache holds "
                 << kv_precision_name(cache_.precision())
                 << " keys and values, which this chapter's kernels do not read; give the runner "
                    "a kernel that does first (ModelRunner::use_attention with an INT8 kernel)");
  std::size_t rows = 0;
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    const SequenceChunk& chunk = chunks[i];
    const std::int64_t end = chunk.start + static_cast<std::int64_t>(chunk.tokens.size());
    BOOK_CHECK(!chunk.tokens.empty() && chunk.start >= 0,
               "ModelRunner::run: chunk " << i << " has " << chunk.tokens.size()
                                          << " new tokens at position " << chunk.start
                                          << "; it needs at least one, at a position >= 0");
    BOOK_CHECK(end <= config_.context, "ModelRunner::run: chunk "
                                           << i << " reaches position " << end - 1
                                           << ", but the model's context is " << config_.context
                                           << " positions (0.." << config_.context - 1
                                           << "): the sequence is longer than the model can read");
    const int needed = blocks_for(end, cache_.block_size());
    BOOK_CHECK(static_cast<int>(chunk.block_table.size()) >= needed,
               "ModelRunner::run: chunk " << i << " covers " << end << " positions, which need "
                                          << needed << " blocks of " << cache_.block_size()
                                          << ", but its block table has "
                                          << chunk.block_table.size());
    for (int b = 0; b < needed; ++b)
      BOOK_CHECK(chunk.block_table[b] >= 0 && chunk.block_table[b] < cache_.num_blocks(),
                 "ModelRunner::run: chunk " << i << "'s block " << b << " is "
                                            << chunk.block_table[b] << ", outside the cache's 0.."
                                            << cache_.num_blocks() - 1);
    for (const int token : chunk.tokens)
      BOOK_CHECK(token >= 0 && token < config_.vocab_size, "ModelRunner::run: chunk "
                                                               << i << " has token " << token
                                                               << ", outside the vocabulary 0.."
                                                               << config_.vocab_size - 1);
    rows += chunk.tokens.size();
  }
  BOOK_CHECK(rows >= 1 && rows <= static_cast<std::size_t>(max_rows_),
             "ModelRunner::run: " << rows << " new tokens in this step; the runner was made for 1.."
                                  << max_rows_ << " (split the prefill into chunks)");
}

//! [runner_attention]
// The attention of one layer for every new row: first write each row's key and value into its
// sequence's slot (so a prompt's later rows see its earlier ones), then let each row attend to
// positions [0, its own] through its sequence's block table.
void ModelRunner::attention(int layer, const float* qkv, float* att_out) {
  const int c = config_.d_model, bs = cache_.block_size();
  const int rows = static_cast<int>(queries_.size());
  for (int r = 0; r < rows; ++r) {
    const SequenceChunk& chunk = chunks_[row_chunk_[r]];
    const int p = row_position_[r];
    const float* row = qkv + static_cast<std::size_t>(r) * 3 * c;  // q, then k, then v
    cache_.write(layer, {chunk.block_table[p / bs], p % bs}, row + c, row + 2 * c);
    queries_[r] = {row, att_out + static_cast<std::size_t>(r) * c, chunk.block_table, p + 1};
  }
  if (attention_)
    attention_(cache_, layer, queries_);
  else if (kernel_ == AttentionKernel::kFast)
    fast_.run(cache_.layer(layer), queries_);
  else
    paged_attention_reference(cache_.layer(layer), queries_);
}
//! [runner_attention]

std::span<const float> ModelRunner::run(std::span<const SequenceChunk> chunks) {
  check(chunks);
  chunks_ = chunks;
  const int c = config_.d_model, v = config_.vocab_size;
  int rows = 0;
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    const SequenceChunk& chunk = chunks[i];
    const int n = static_cast<int>(chunk.tokens.size());
    // Token + position embedding; positions start where the cache ends.
    train::embedding_forward(chunk.tokens.data(), 1, n, weights_.wte,
                             weights_.wpe + static_cast<std::size_t>(chunk.start) * c, c,
                             stream_.data() + static_cast<std::size_t>(rows) * c);
    for (int j = 0; j < n; ++j, ++rows) {
      row_chunk_[rows] = static_cast<int>(i);
      row_position_[rows] = chunk.start + j;
    }
  }
  queries_.resize(rows);
  CallerProjections projections(linear_);  // used only when the caller gave its projections
  for (int layer = 0; layer < config_.n_layer; ++layer) {
    const train::AttentionCore<float> cached = [&](const float* qkv, float* att_out) {
      attention(layer, qkv, att_out);
    };
    projections.layer = layer;
    train::block_forward_rows(config_, {}, weights_.blocks[layer], rows, stream_.data(),
                              next_stream_.data(), acts_, workspace_, cached,
                              linear_ ? &projections : nullptr);
    std::swap(stream_, next_stream_);
  }
  // The head only on the rows whose logits were asked for.
  int out_rows = 0;
  for (int r = 0; r < rows; ++r) {
    const SequenceChunk& chunk = chunks[row_chunk_[r]];
    const bool last = r + 1 == rows || row_chunk_[r + 1] != row_chunk_[r];
    if (!chunk.all_logits && !last) continue;
    std::copy_n(stream_.data() + static_cast<std::size_t>(r) * c, c,
                head_in_.data() + static_cast<std::size_t>(out_rows++) * c);
  }
  train::layernorm_forward(head_in_.data(), weights_.lnf_gain, weights_.lnf_bias, out_rows, c,
                           head_out_.data(), mean_.data(), rstd_.data());
  // Tied head: logits = LN_f(x) · wteᵀ.
  train::matmul<float>(false, true, out_rows, v, c, 1.0f, head_out_.data(), c, weights_.wte, c,
                       0.0f, logits_.data(), v);
  return {logits_.data(), static_cast<std::size_t>(out_rows) * v};
}

}  // namespace book::kv
