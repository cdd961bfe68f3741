// The stage's section "The OOM ladder": Llama-2 7B at 4096 tokens on one GPU, the remedies in the
// order an engineer tries them (the calculator); and the section's picture's data, the same model
// by category against sequence length and ZeRO stage.
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "chapters/06_zero/zero_trainer.h"
#include "chapters/09_memory_accounting/calculator.h"
#include "chapters/09_memory_accounting/stage.h"
#include "common/table.h"

namespace book::mem::stage {
namespace {

struct Rung {
  std::string remedy;
  Setup setup;
  bool offload = false;  // the optimizer states (master, m, v) live in host memory
};

// Llama-2 7B at 4k tokens on one GPU: every remedy in the order an engineer tries them.
std::vector<Rung> ladder() {
  Setup s;
  s.shape = preset("llama2-7b");
  s.seq = 4096;
  s.micro_batch = 8;
  s.overhead_bytes = std::uint64_t{1} << 30;
  std::vector<Rung> rungs{{"baseline: bf16 + Adam, micro-batch 8, 1 GPU", s}};
  s.micro_batch = 1;
  rungs.push_back({"micro-batch 1 (+ 8 accumulation steps: same global batch)", s});
  s.recompute = Recompute::kSelective;
  rungs.push_back({"+ selective recomputation", s});
  // FlashAttention never stores the s² scores: the calculator prices it as selective
  // recomputation (the 5as/h term gone), without the lse's 4·a·s bytes per layer (under 0.1% of the
  // activations).
  rungs.push_back({"or instead: tiled (Flash) attention, no recomputation", s});
  s.recompute = Recompute::kFull;
  rungs.push_back({"+ full recomputation", s});
  s.parallel.dp = 8;
  s.parallel.stage = zero::Stage::kZero1;
  rungs.push_back({"+ ZeRO-1 over 8 GPUs", s});
  s.parallel.stage = zero::Stage::kZero3;
  rungs.push_back({"+ ZeRO-3 over 8 GPUs", s});
  s.parallel.dp = 1;
  s.parallel.stage = zero::Stage::kDdp;
  rungs.push_back({"instead of ZeRO: optimizer states offloaded to host, 1 GPU", s, true});
  s.optimizer = Optimizer::kAdam8bit;
  rungs.push_back({"instead of ZeRO: 8-bit Adam on 1 GPU (full recomputation)", s});
  return rungs;
}

Table ladder_table(const std::vector<Rung>& rungs, double gpu_gib) {
  Table t({"remedy", "params", "grads", "optimizer", "activations", "comm", "overhead", "total GiB",
           "fits"});
  for (const Rung& r : rungs) {
    Breakdown b = calculate(r.setup);
    if (r.offload) b.master_weights = b.optimizer_moments = 0;  // in host memory
    t.add_row({r.remedy, gib(b.parameters), gib(b.gradients), gib(b.optimizer_states()),
               gib(b.activations), gib(b.communication), gib(b.overhead), gib(b.total()),
               static_cast<double>(b.total()) <= gpu_gib * (1u << 30) ? "yes" : "no"});
  }
  return t;
}

// A 7B model by category vs sequence length (1 GPU, micro-batch 1) and vs ZeRO stage (8 GPUs,
// selective recomputation).
Table sweep_table() {
  Table t({"sweep", "x", "parameters", "gradients", "optimizer_states", "activations",
           "communication", "total"});
  Setup s;
  s.shape = preset("llama2-7b");
  const auto add = [&](const std::string& sweep, const std::string& x) {
    const Breakdown b = calculate(s);
    t.add_row({sweep, x, gib(b.parameters), gib(b.gradients), gib(b.optimizer_states()),
               gib(b.activations), gib(b.communication), gib(b.total())});
  };
  for (std::int64_t seq : {1024, 2048, 4096, 8192, 16384, 32768}) {
    s.seq = seq;
    add("seq", std::to_string(seq));
  }
  s.seq = 4096;
  s.parallel.dp = 8;
  s.recompute = Recompute::kSelective;
  for (zero::Stage z :
       {zero::Stage::kDdp, zero::Stage::kZero1, zero::Stage::kZero2, zero::Stage::kZero3}) {
    s.parallel.stage = z;
    add("zero", zero::stage_name(z));
  }
  return t;
}

}  // namespace

TourLines ladder_section(const StageOptions& options) {
  const std::vector<Rung> rungs = ladder();
  const Table lad = ladder_table(rungs, options.gpu_gib);
  std::cout << "## The OOM ladder: Llama-2 7B, seq 4096, bf16, one " << options.gpu_gib
            << " GiB GPU (calculator)\n\n"
            << lad.markdown() << "\n";
  const std::string dir = results_dir();
  lad.write_csv(dir + "/ch09_ladder.csv");
  lad.write_json(dir + "/ch09_ladder.json");

  const Breakdown first = calculate(rungs.front().setup), last = calculate(rungs[6].setup);
  std::ostringstream tour;
  tour << "tour: 09 | Llama-2 7B seq 4096: baseline mb 8 -> mb 1 + full recompute + "
          "ZeRO-3 x8 | "
       << gib(first.total()) << " -> " << gib(last.total())
       << " GiB per GPU | the OOM ladder (calculator, Korthikanti 2022 + ZeRO)\n";
  return tour.str();
}

void sweep_section(const StageOptions&) {
  const Table sweep = sweep_table();
  std::cout << "## Llama-2 7B by category (GiB): seq sweep (1 GPU, micro-batch 1) and ZeRO stage "
               "(8 GPUs, seq 4096, selective recomputation)\n\n"
            << sweep.markdown() << "\n";
  const std::string dir = results_dir();
  sweep.write_csv(dir + "/ch09_sweep.csv");
  sweep.write_json(dir + "/ch09_sweep.json");
}

}  // namespace book::mem::stage
