#include "chapters/07_tensor_parallel/tp_stage.h"

#include "chapters/07_tensor_parallel/parallel_trainer.h"
#include "common/flags.h"

namespace book::tp {

StageOptions parse_stage_options(int argc, const char* const* argv) {
  StageOptions o;
  int steps = -1, moe_tokens = -1, balance_steps = -1;  // -1: the default for the mode
  Flags flags("tp",
              "tensor, sequence and expert parallelism on thread ranks: bytes per rank, traffic "
              "per layer, step time and loss deviation per degree; the NVLink/network bandwidth "
              "model; the MoE all-to-all and load balance");
  flags.add("tour", &o.tour, "the short run whose headline lines //:tour collects");
  flags.add("steps", &steps, "training steps per degree (default 20, 8 with --tour)")
      .range(2, 100000);
  flags.add("degrees", &o.degrees, "tensor-parallel degrees, as thread ranks").range(1, 64);
  flags.add("micro-batch", &o.micro_batch, "sequences per step").range(1, 4096);
  flags.add("digits", &o.digits, "operand digits of chapter 4's addition task").range(1, 6);
  flags.add("layers", &o.layers, "transformer blocks").range(1, 64);
  flags.add("d-model", &o.d_model, "width of the residual stream").range(1, 4096);
  flags.add("heads", &o.heads, "attention heads (every degree must divide them)").range(1, 256);
  flags.add("experts", &o.experts, "experts of the MoE layer").range(1, 256);
  flags
      .add("moe-tokens", &moe_tokens,
           "tokens per expert-parallel rank (default 512, 256 with --tour)")
      .range(1, 1 << 20);
  flags
      .add("balance-steps", &balance_steps,
           "router steps on the load-balancing loss (default 100, 40 with --tour)")
      .range(1, 100000);
  flags.parse(argc, argv);
  o.steps = steps > 0 ? steps : (o.tour ? 8 : 20);
  o.moe_tokens = moe_tokens > 0 ? moe_tokens : (o.tour ? 256 : 512);
  o.balance_steps = balance_steps > 0 ? balance_steps : (o.tour ? 40 : 100);
  return o;
}

train::TrainOptions stage_training(const StageOptions& options) {
  train::TrainOptions o;
  o.digits = options.digits;
  o.micro_batch = options.micro_batch;
  o.model.n_layer = options.layers;
  o.model.d_model = options.d_model;
  o.model.n_head = options.heads;
  o.total_steps = 1000;
  o.warmup_steps = 5;
  return with_task_shape(o);
}

}  // namespace book::tp
