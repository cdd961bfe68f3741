// Test inputs for paged attention: a random pool whose sequences sit in shuffled blocks, the same
// sequences laid out contiguously, and naive attention in double on the gathered cache.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "chapters/10_paged_attention/paged_attention.h"
#include "common/rng.h"

namespace book::kv::testing {

/// One layer's pool with `lengths.size()` sequences of random keys and values, each sequence in
/// blocks taken from a shuffled pool (so neighbours in a table are far apart in memory), plus one
/// query row per sequence. Slots past a sequence's length hold NaN: a kernel that reads them
/// shows it.
struct PagedLayer {
  int block_size = 0, n_head = 0, head_dim = 0;
  std::vector<float> keys, values;  // the pool
  std::vector<std::vector<BlockId>> tables;
  std::vector<int> lengths;
  std::vector<float> queries;                                    // [sequences, n_head · head_dim]
  std::vector<std::vector<float>> logical_keys, logical_values;  // [sequence][position][h·d]

  int width() const { return n_head * head_dim; }
  LayerKvView view() const {
    return {keys.data(), values.data(), static_cast<int>(keys.size() / (block_size * width())),
            block_size,  n_head,        head_dim};
  }
  /// One query per sequence, attending to its whole length, writing into `out`.
  std::vector<AttentionQuery> decode_queries(std::vector<float>& out) const {
    out.assign(lengths.size() * width(), std::numeric_limits<float>::quiet_NaN());  // poisoned
    std::vector<AttentionQuery> q;
    for (std::size_t s = 0; s < lengths.size(); ++s)
      q.push_back({queries.data() + s * width(), out.data() + s * width(), tables[s], lengths[s]});
    return q;
  }
};

/// The sequences of `lengths` (each >= 1) in blocks of `block_size`, values from `seed`. With
/// `contiguous_len` > 0 the layout is the contiguous baseline instead: block_size = contiguous_len,
/// sequence s in block s. The same seed gives the same logical keys, values and queries in both.
inline PagedLayer make_paged_layer(const std::vector<int>& lengths, int block_size, int n_head,
                                   int head_dim, std::uint64_t seed, int contiguous_len = 0) {
  PagedLayer layer;
  layer.block_size = contiguous_len > 0 ? contiguous_len : block_size;
  layer.n_head = n_head;
  layer.head_dim = head_dim;
  layer.lengths = lengths;
  Rng rng(seed);
  const int w = n_head * head_dim;
  for (int len : lengths) {
    std::vector<float> k(static_cast<std::size_t>(len) * w), v(k.size());
    for (auto& x : k) x = static_cast<float>(rng.uniform(-1, 1));
    for (auto& x : v) x = static_cast<float>(rng.uniform(-1, 1));
    layer.logical_keys.push_back(k);
    layer.logical_values.push_back(v);
  }
  layer.queries.resize(lengths.size() * w);
  for (auto& x : layer.queries) x = static_cast<float>(rng.uniform(-1, 1));
  // Blocks: contiguous = one per sequence, in order; paged = a shuffled pool with spare blocks.
  int total = 0;
  for (int len : lengths) total += (len + layer.block_size - 1) / layer.block_size;
  const int pool = contiguous_len > 0 ? static_cast<int>(lengths.size()) : total + 3;
  std::vector<BlockId> order(pool);
  for (int b = 0; b < pool; ++b) order[b] = b;
  if (contiguous_len == 0)
    for (int b = pool - 1; b > 0; --b) std::swap(order[b], order[rng.uniform_int(0, b)]);
  const std::size_t block_numbers = static_cast<std::size_t>(layer.block_size) * w;
  layer.keys.assign(pool * block_numbers, std::numeric_limits<float>::quiet_NaN());
  layer.values.assign(layer.keys.size(), std::numeric_limits<float>::quiet_NaN());
  const LayerKvView view = layer.view();
  int next = 0;
  for (std::size_t s = 0; s < lengths.size(); ++s) {
    std::vector<BlockId> table;
    for (int b = 0; b * layer.block_size < lengths[s]; ++b) table.push_back(order[next++]);
    for (int t = 0; t < lengths[s]; ++t)
      for (int h = 0; h < n_head; ++h)
        for (int d = 0; d < head_dim; ++d) {
          const std::size_t at =
              view.offset(table[t / layer.block_size], h, t % layer.block_size) + d;
          layer.keys[at] =
              layer.logical_keys[s][static_cast<std::size_t>(t) * w + h * head_dim + d];
          layer.values[at] =
              layer.logical_values[s][static_cast<std::size_t>(t) * w + h * head_dim + d];
        }
    layer.tables.push_back(table);
  }
  return layer;
}

/// Naive attention in double for sequence `s`'s query over its first `context_len` positions of
/// the gathered (logical, contiguous) keys and values: [n_head · head_dim].
inline std::vector<double> naive_attention(const PagedLayer& layer, std::size_t s,
                                           const float* query, int context_len) {
  const int w = layer.width(), d = layer.head_dim;
  std::vector<double> out(w, 0.0);
  for (int h = 0; h < layer.n_head; ++h) {
    std::vector<double> score(context_len);
    double max_score = -std::numeric_limits<double>::infinity();
    for (int t = 0; t < context_len; ++t) {
      double dot = 0;
      for (int i = 0; i < d; ++i)
        dot += double(query[h * d + i]) *
               layer.logical_keys[s][static_cast<std::size_t>(t) * w + h * d + i];
      score[t] = dot / std::sqrt(double(d));
      max_score = std::max(max_score, score[t]);
    }
    double sum = 0;
    for (double& x : score) sum += (x = std::exp(x - max_score));
    for (int t = 0; t < context_len; ++t)
      for (int i = 0; i < d; ++i)
        out[h * d + i] +=
            score[t] / sum * layer.logical_values[s][static_cast<std::size_t>(t) * w + h * d + i];
  }
  return out;
}

}  // namespace book::kv::testing
