// The stage's section "Attention without the T × T matrix": the tiled (FlashAttention-style)
// attention against chapter 4's, the bytes each holds through forward + backward and the largest
// difference of their outputs and gradients.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "chapters/04_training_baseline/layers.h"
#include "chapters/09_memory_accounting/flash_attention.h"
#include "chapters/09_memory_accounting/stage.h"
#include "common/memory.h"
#include "common/rng.h"
#include "common/table.h"

namespace book::mem::stage {
namespace {

// Tiled attention against chapter 4's: the bytes each holds through forward + backward (a
// tracker), and the largest difference of out and dqkv. Chapter 4 keeps att [B, H, T, T] for its
// backward; the tiled one keeps lse [B, H, T] and its scratch.
struct FlashResult {
  FlashShape shape;
  std::size_t naive = 0, tiled = 0;
  double max_diff = 0;
};

//! [flash_measure]
FlashResult measure_flash(const FlashShape& s) {
  const std::size_t tokens = static_cast<std::size_t>(s.batch) * s.seq_len;
  const std::size_t width = static_cast<std::size_t>(s.n_head) * s.head_size;
  Rng rng(7);
  std::vector<float> qkv(tokens * 3 * width), dout(tokens * width);
  for (float& x : qkv) x = static_cast<float>(rng.uniform(-1, 1));
  for (float& x : dout) x = static_cast<float>(rng.uniform(-1, 1));
  std::vector<float> out_naive(tokens * width), out_tiled(tokens * width);
  std::vector<float> d_naive(tokens * 3 * width), d_tiled(tokens * 3 * width);
  FlashResult r{s};
  {
    MemoryTracker tracker;
    TrackedBuffer<float> att(s.rows() * s.seq_len, MemoryCategory::kActivations, &tracker);
    train::attention_forward(qkv.data(), s.batch, s.seq_len, s.n_head, s.head_size, att.data(),
                             out_naive.data());
    train::attention_backward(dout.data(), qkv.data(), att.data(), s.batch, s.seq_len, s.n_head,
                              s.head_size, d_naive.data());
    r.naive = tracker.peak_total();
  }
  MemoryTracker tracker;
  TrackedBuffer<float> lse(s.rows(), MemoryCategory::kActivations, &tracker);
  flash_attention_forward(qkv.data(), s, out_tiled.data(), lse.data(), &tracker);
  flash_attention_backward(dout.data(), qkv.data(), out_tiled.data(), lse.data(), s, d_tiled.data(),
                           &tracker);
  r.tiled = tracker.peak_total();
  for (std::size_t i = 0; i < out_naive.size(); ++i)
    r.max_diff = std::max(r.max_diff, static_cast<double>(std::abs(out_naive[i] - out_tiled[i])));
  for (std::size_t i = 0; i < d_naive.size(); ++i)
    r.max_diff = std::max(r.max_diff, static_cast<double>(std::abs(d_naive[i] - d_tiled[i])));
  return r;
}
//! [flash_measure]

Table flash_table(std::vector<FlashResult>* results) {
  Table t({"B", "T", "heads", "head size", "tile", "chapter 4 (att B·H·T·T) B",
           "tiled (lse + scratch) B", "ratio", "max abs diff out, dqkv"});
  // The book's model at micro-batch 32, then one long sequence of the same heads.
  for (const FlashShape& s : {FlashShape{32, 10, 4, 16, 16}, FlashShape{1, 1024, 4, 16, 64},
                              FlashShape{1, 2048, 4, 16, 64}}) {
    const FlashResult r = measure_flash(s);
    results->push_back(r);
    t.add_row({std::to_string(s.batch), std::to_string(s.seq_len), std::to_string(s.n_head),
               std::to_string(s.head_size), std::to_string(s.tile), std::to_string(r.naive),
               std::to_string(r.tiled),
               fixed(static_cast<double>(r.naive) / static_cast<double>(r.tiled), 1),
               fixed(r.max_diff * 1e6, 2) + "e-6"});
  }
  return t;
}

}  // namespace

TourLines flash_section(const StageOptions&) {
  std::cerr << "memory: tiled attention against chapter 4's ...\n";
  std::vector<FlashResult> flash;
  const Table flash_t = flash_table(&flash);
  std::cout << "## Tiled (FlashAttention-style) attention: bytes held through forward + backward, "
               "float, against chapter 4's\n\n"
            << flash_t.markdown() << "\n";
  flash_t.write_csv(results_dir() + "/ch09_flash.csv");

  std::ostringstream tour;
  tour << "tour: 09 | attention T = " << flash.back().shape.seq_len
       << ", 4 heads: chapter 4's T x T probabilities -> tiled (lse + one tile) | "
       << flash.back().naive << " -> " << flash.back().tiled << " B, max |diff| "
       << flash.back().max_diff
       << " | FlashAttention never materialises T x T (Dao 2022), same outputs and grads\n";
  return tour.str();
}

}  // namespace book::mem::stage
