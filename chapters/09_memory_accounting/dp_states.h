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
/// chapter 6's zero::model_state_bytes. Stage 3 is stage 2 with the 16-bit parameters sharded
/// as well (2⌈Ψ/N⌉ instead of 2Ψ): chapter 6's model_state_bytes refuses stage 3 until its
/// trainer runs it, so this is the one place that says so. Throws book::Error (naming --dp)
/// if dp < 1 or psi < dp.
zero::ModelStateBytes dp_model_states(std::uint64_t psi, int dp, zero::Stage stage,
                                      DType precision);

}  // namespace book::mem
