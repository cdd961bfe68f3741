/// @file
/// The model state of one rank of a DP × TP × PP grid: which parameters land on the rank, and
/// what its data-parallel group's ZeRO stage keeps of them.
#pragma once

#include <cstdint>

#include "chapters/06_zero/sharding.h"
#include "chapters/06_zero/zero_options.h"
#include "chapters/09_memory_accounting/model_shape.h"
#include "common/dtype.h"

namespace book::mem {

/// How the ranks are arranged: dp · tp · pp ranks in all.
struct Parallelism {
  int dp = 1;                             ///< data-parallel degree (N of ZeRO)
  int tp = 1;                             ///< tensor-parallel degree (t)
  int pp = 1;                             ///< pipeline stages (p)
  zero::Stage stage = zero::Stage::kDdp;  ///< what the data-parallel group shards
  bool sequence_parallel = false;         ///< Megatron's sequence parallelism (with tp > 1)
};

/// Exercise mem.zero_model_states (first half): the parameters held by the rank of the grid
/// that holds the most: n_layer/pp blocks, each
/// with its matrices split over tp (⌈matrices/tp⌉) and its norms replicated, plus the
/// embedding and the head split over tp (both when pp = 1; the larger of the two when the
/// first and last stages differ). Throws book::Error naming --tp or --pp if tp does not divide
/// the heads or pp the layers.
std::int64_t rank_parameters(const ModelShape& shape, const Parallelism& par);

/// Exercise mem.zero_model_states (second half): the model-state bytes (parameters, gradients, FP32
/// master, Adam's m and v) of that rank: its rank_parameters() Ψ_rank, sharded over the
/// data-parallel group by dp_model_states (chapter 6's formula). With dp = tp = pp = 1 in mixed
/// precision: 16 bytes per parameter.
zero::ModelStateBytes zero_model_states(const ModelShape& shape, const Parallelism& par,
                                        DType precision);

}  // namespace book::mem
