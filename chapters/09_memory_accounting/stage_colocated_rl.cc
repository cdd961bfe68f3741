// The stage's section "Colocated RL memory": Llama-2 7B's ZeRO-3 training state and an inference
// engine's weights and KV pool on one GPU's ledger, colocated and time-sliced.
#include <cstdint>
#include <iostream>
#include <sstream>
#include <string>

#include "chapters/06_zero/zero_trainer.h"
#include "chapters/09_memory_accounting/calculator.h"
#include "chapters/09_memory_accounting/colocated_rl.h"
#include "chapters/09_memory_accounting/stage.h"
#include "common/check.h"
#include "common/table.h"

namespace book::mem::stage {
namespace {

// Colocated RL on 8 GPUs of 80 GiB: Llama-2 7B trained with ZeRO-3 over 8 (the ladder's
// last ZeRO rung), rollouts by an engine with the whole BF16 model on every GPU and a paged KV
// pool (chapter 10's 2·L·H_kv·D·2 bytes per token, 16-token blocks).
struct RlRun {
  RlMemorySetup setup;
  std::int64_t blocks[2] = {0, 0};  // the largest pool: colocated, time-sliced
  RlPlan plans[2];                  // each with its own largest pool
  std::string refused;              // colocated with the time-sliced pool
};

constexpr std::uint64_t kRlOverhead = std::uint64_t{1} << 30;  // CUDA context, workspaces

//! [rl_setup]
RlMemorySetup rl_setup(double gpu_gib) {
  Setup train;
  train.shape = preset("llama2-7b");
  train.seq = 4096;
  train.micro_batch = 1;
  train.recompute = Recompute::kFull;
  train.parallel.dp = 8;
  train.parallel.stage = zero::Stage::kZero3;
  train.overhead_bytes = kRlOverhead;
  const Breakdown b = calculate(train);
  const ModelShape& m = train.shape;
  RlMemorySetup s;
  const std::uint64_t gpu = static_cast<std::uint64_t>(gpu_gib * (1u << 30));
  s.budget = gpu > b.overhead ? gpu - b.overhead : 0;
  s.training_state = b.parameters + b.gradients + b.optimizer_states();  // 16 B/param / 8
  s.training_activations = b.activations + b.communication;  // and ZeRO-3's gathered layers
  s.inference_weights = 2 * static_cast<std::uint64_t>(parameters_of(m).total);
  s.kv_bytes_per_token =
      2ull * m.n_layer * m.n_kv_head * (m.d_model / m.n_head) * 2;  // K and V, BF16
  s.block_size = 16;
  //! [rl_setup]
  return s;
}

RlRun colocated_rl(double gpu_gib) {
  RlRun run;
  run.setup = rl_setup(gpu_gib);
  const RlMemorySetup& s = run.setup;
  for (int i = 0; i < 2; ++i) {
    const RlPlacement p = i == 0 ? RlPlacement::kColocated : RlPlacement::kTimeSliced;
    run.blocks[i] = max_kv_blocks(s, p);
    RlMemorySetup with = s;
    with.kv_blocks = run.blocks[i];
    run.plans[i] = run_rl_memory(with, p, 2);
  }
  RlMemorySetup big = s;
  big.kv_blocks = run.blocks[1];
  try {
    run_rl_memory(big, RlPlacement::kColocated, 2);
  } catch (const Error& e) {
    run.refused = e.what();
  }
  return run;
}

Table rl_table(const RlRun& run) {
  Table t({"placement", "phase", "training state GiB", "training activations GiB",
           "inference weights GiB", "KV pool GiB", "GPU total GiB", "host GiB"});
  for (const RlPlan& plan : run.plans)
    for (const RlPhase& phase : plan.phases) {
      const auto held = [&](const char* what) {
        const auto it = phase.device.find(what);
        return gib(it == phase.device.end() ? 0 : it->second);
      };
      t.add_row({rl_placement_name(plan.placement), phase.name, held("training state"),
                 held("training activations"), held("inference weights"), held("KV pool"),
                 gib(phase.device_total), gib(phase.host_total)});
    }
  return t;
}

}  // namespace

// Refuses, before minutes of measuring, a --gpu-gib too small for the colocated placement's one
// KV block (its ledger would fail at the end, not naming the flag).
void check_gpu_holds_rl(double gpu_gib) {
  const RlMemorySetup s = rl_setup(gpu_gib);
  const std::uint64_t smallest = smallest_budget(s, RlPlacement::kColocated);
  const std::uint64_t gib = std::uint64_t{1} << 30;
  BOOK_CHECK(s.budget >= smallest,
             "--gpu-gib " << gpu_gib << " is too small for the colocated RL table: Llama-2 7B's "
                          << "ZeRO-3 training state, its activations and the engine's weights "
                          << "leave no room for one KV block; use --gpu-gib "
                          << (smallest + kRlOverhead + gib - 1) / gib << " or more");
}

TourLines colocated_rl_section(const StageOptions& options) {
  const RlRun rl = colocated_rl(options.gpu_gib);
  const Table rl_t = rl_table(rl);
  const std::uint64_t per_block = rl.setup.block_size * rl.setup.kv_bytes_per_token;
  std::cout << "## Colocated RL: Llama-2 7B, ZeRO-3 training over 8 GPUs + a full-model engine, "
               "one "
            << options.gpu_gib << " GiB GPU (budget " << rl.setup.budget
            << " B after 1 GiB overhead)\n\n"
            << rl_t.markdown() << "\n";
  for (int i = 0; i < 2; ++i)
    std::cout << "rl: " << rl_placement_name(rl.plans[i].placement) << ": largest KV pool "
              << rl.blocks[i] << " blocks = " << rl.blocks[i] * rl.setup.block_size
              << " tokens in flight (" << gib(rl.blocks[i] * per_block) << " GiB); GPU peak "
              << rl.plans[i].device_peak << " B (" << gib(rl.plans[i].device_peak)
              << " GiB); moved to host and back per cycle " << rl.plans[i].moved_per_cycle
              << " B; engine weight sync per cycle " << rl.plans[i].sync_per_cycle << " B\n";
  std::cout << "rl: colocated with the time-sliced pool: " << rl.refused << "\n\n";
  rl_t.write_csv(results_dir() + "/ch09_colocated_rl.csv");

  std::ostringstream tour;
  tour << "tour: 09 | colocated RL, Llama-2 7B (ZeRO-3 x8 training + full-model engine), "
          "80 GiB GPU: largest KV pool, colocated -> time-sliced | "
       << rl.blocks[0] * rl.setup.block_size << " -> " << rl.blocks[1] * rl.setup.block_size
       << " tokens, at " << gib(rl.plans[1].moved_per_cycle)
       << " GiB moved per cycle | time-slicing gives rollouts the training state's memory\n";
  return tour.str();
}

}  // namespace book::mem::stage
