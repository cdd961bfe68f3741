/// @file
/// The host halves of chapter 2's exercises: each exercise rung's schedule, built from the same
/// map functions its kernel calls (solutions/02_gemm_cuda/*_map.h, or your exercises/ copy).
/// The CPU tests check these schedules on every machine; the GPU tests check the kernels
/// (kernels.h) where there is a GPU.
#pragma once

#include "chapters/02_gemm_cuda/schedule.h"

namespace book::gemm_cuda {

/// Exercise cuda_gemm.shared_tile (rung 3): the schedule of thread `thread` (= ty · 32 + tx) of
/// block (block_x, block_y) at step `k_step`: the A and B elements it copies into the 32 × 32
/// shared tiles, and the C element it computes.
ThreadSchedule shared_tile_schedule(GemmShape shape, int block_x, int block_y, int thread,
                                    int k_step);

/// Exercise cuda_gemm.register_2d (rung 5): the schedule of one thread of the 128 × 128 × 8
/// block tile (BlockTile2d): four A and four B elements per step, an 8 × 8 square of C.
ThreadSchedule register_2d_schedule(GemmShape shape, int block_x, int block_y, int thread,
                                    int k_step);

/// Exercise cuda_gemm.wmma (rung 8): the schedule of one thread of the 128 × 128 × 32 BF16
/// block tile (TensorTile): two 8-element chunks of A and two of B per step, and the C elements
/// it copies out of its warp's staged 16 × 16 accumulator fragments.
ThreadSchedule wmma_schedule(GemmShape shape, int block_x, int block_y, int thread, int k_step);

}  // namespace book::gemm_cuda
