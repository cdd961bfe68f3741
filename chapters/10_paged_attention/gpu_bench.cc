// bazel run -c opt //chapters/10_paged_attention:gpu_bench [-- --tour]   (packed by tools/gpu)
//
// Times the CUDA paged-attention kernel on one layer of a 7B-sized model (32 heads of 128), decode
// queries over batch × context, on the paged layout (blocks of 16, shuffled) and on the contiguous
// one (one max-length slot per sequence), in one run; checks both against the CPU's fast kernel
// first. Prints milliseconds, the effective bandwidth of reading K and V, and paged / contiguous.
// Without a GPU it says so and exits 0.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <vector>

#include "chapters/10_paged_attention/attention_cpu.h"
#include "chapters/10_paged_attention/attention_cuda.h"
#include "common/cuda.h"
#include "common/flags.h"
#include "common/machine_load.h"
#include "common/main.h"
#include "common/rng.h"
#include "common/table.h"

namespace {

using namespace book::kv;

// A pool holding `batch` sequences of `context` random positions; paged (blocks of 16 in a
// shuffled order) or contiguous (block i = sequence i, max_len = context).
struct Pool {
  std::vector<float> keys, values, queries, out;
  std::vector<std::vector<BlockId>> tables;
  LayerKvView view;
  std::vector<AttentionQuery> batch;
};

Pool make_pool(int batch, int context, int heads, int dim, bool paged, std::uint64_t seed) {
  Pool p;
  const int bs = paged ? 16 : context, per_seq = (context + bs - 1) / bs, blocks = batch * per_seq;
  const std::size_t numbers = static_cast<std::size_t>(blocks) * heads * bs * dim;
  book::Rng rng(seed);
  p.keys.resize(numbers);
  p.values.resize(numbers);
  for (auto& x : p.keys) x = static_cast<float>(rng.uniform(-1, 1));
  for (auto& x : p.values) x = static_cast<float>(rng.uniform(-1, 1));
  std::vector<BlockId> order(blocks);
  for (int b = 0; b < blocks; ++b) order[b] = b;
  if (paged)
    for (int b = blocks - 1; b > 0; --b) std::swap(order[b], order[rng.uniform_int(0, b)]);
  p.queries.resize(static_cast<std::size_t>(batch) * heads * dim);
  for (auto& x : p.queries) x = static_cast<float>(rng.uniform(-1, 1));
  p.out.resize(p.queries.size());
  p.view = {p.keys.data(), p.values.data(), blocks, bs, heads, dim};
  for (int s = 0; s < batch; ++s)
    p.tables.emplace_back(order.begin() + s * per_seq, order.begin() + (s + 1) * per_seq);
  for (int s = 0; s < batch; ++s)
    p.batch.push_back({p.queries.data() + static_cast<std::size_t>(s) * heads * dim,
                       p.out.data() + static_cast<std::size_t>(s) * heads * dim, p.tables[s],
                       context});
  return p;
}

double max_difference(const Pool& p) {
  std::vector<float> cpu(p.out.size());
  std::vector<AttentionQuery> queries = p.batch;
  for (std::size_t s = 0; s < queries.size(); ++s)
    queries[s].out = cpu.data() + (queries[s].out - p.out.data());
  CpuPagedAttention(2).run(p.view, queries);
  double worst = 0;
  for (std::size_t i = 0; i < cpu.size(); ++i)
    worst = std::max(worst, static_cast<double>(std::abs(cpu[i] - p.out[i])));
  return worst;
}

int body(int argc, char** argv) {
  bool tour = false;
  book::Flags flags("gpu_bench", "times the CUDA paged-attention kernel, paged vs contiguous");
  flags.add("tour", &tour, "a short run: fewer shapes");
  flags.parse(argc, argv);
  book::print_machine_load();
  std::cout << "# Chapter 10: the CUDA paged-attention kernel\n\n";
  if (book::cuda::device_count() == 0) {
    std::cout << "no GPU: " << book::cuda::no_device_reason()
              << ". Timing the CUDA kernel needs one (tools/gpu/run.sh on a GPU machine).\n";
    return 0;
  }
  std::cout << book::cuda::device_summary() << "\n\none layer, 32 heads of 128 (a 7B model), "
            << "FP32 K/V, one decode query per sequence; median of 20 launches\n\n";
  const int heads = 32, dim = 128;
  book::Table table({"batch", "context", "paged ms", "contiguous ms", "paged GB/s",
                     "contiguous GB/s", "paged / contiguous time", "max |GPU - CPU|"});
  const std::vector<int> batches = tour ? std::vector<int>{8, 64} : std::vector<int>{1, 8, 32, 64};
  const std::vector<int> contexts =
      tour ? std::vector<int>{1024} : std::vector<int>{256, 1024, 4096};
  for (const int batch : batches)
    for (const int context : contexts) {
      Pool paged = make_pool(batch, context, heads, dim, true, 1);
      Pool contiguous = make_pool(batch, context, heads, dim, false, 1);
      GpuPagedAttention gpu_paged(paged.view), gpu_contiguous(contiguous.view);
      const double paged_ms = gpu_paged.time_ms(paged.batch, 20);
      const double contiguous_ms = gpu_contiguous.time_ms(contiguous.batch, 20);
      const double bytes = GpuPagedAttention::bytes_read(paged.view, paged.batch);
      table.add_row(
          {std::to_string(batch), std::to_string(context), book::fixed(paged_ms, 4),
           book::fixed(contiguous_ms, 4), book::fixed(bytes / paged_ms / 1e6, 0),
           book::fixed(bytes / contiguous_ms / 1e6, 0), book::fixed(paged_ms / contiguous_ms, 3),
           book::fixed(std::max(max_difference(paged), max_difference(contiguous)) * 1e6, 2) +
               "e-6"});
    }
  std::cout << table.markdown();
  table.write_csv(book::results_dir() + "/ch10_gpu_attention.csv");
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return book::run_main(argc, argv, body); }
