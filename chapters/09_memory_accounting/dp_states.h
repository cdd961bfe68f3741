/// @file
/// Model-state bytes of one data-parallel rank, for Ψ parameters over N ranks at a ZeRO stage:
/// chapter 6's exact formula (zero::model_state_bytes), with the largest rank's share ⌈Ψ/N⌉.
#pragma once

#include <cstdint>

#include "chapters/06_zero/sharding.h"
#include "chapters/06_zero/zero_options.h"
#include "common/dtype.h"

namespace book::mem {

/// The model state of the data-parallel rank that owns the most, ⌈psi/dp⌉ elements, by
/// chapter 6's zero::model_state_bytes (stages 0–3; stage 3 shards every category: 16 bytes per
/// owned parameter). Throws book::Error (naming --dp) if dp < 1 or psi < dp, and if psi is
/// above 2^59 (its bytes would overflow 64 bits).
zero::ModelStateBytes dp_model_states(std::uint64_t psi, int dp, zero::Stage stage,
                                      DType precision);

}  // namespace book::mem
