/// @file
/// The chapter's benchmark in sections: each file registers its Google Benchmarks and has a
/// prologue (what it prints and checks before the timed runs: the peers' configuration, the
/// ceilings) and a report (its table from the shared reporter, after every benchmark of every
/// section ran, their repetitions interleaved). bench_main.cc runs them in one program.
#pragma once

#include "common/repetition_reporter.h"

namespace book::quant::bench_sections {

/// Weight-only GEMV (bench_gemv.cc): OpenBLAS's kernels and the read-bandwidth ceilings.
void gemv_prologue();
/// GB/s and the fraction of read bandwidth per kernel, against our FP32 GEMV.
void gemv_report(const RepetitionReporter& reporter);

/// W8A8 (bench_w8a8.cc): our kernel, oneDNN's implementation; checks both give the same sums.
void w8a8_prologue();
/// Ours against oneDNN and chapter 1's sgemm; runs PyTorch's peer script (found from `argv0`).
void w8a8_report(const RepetitionReporter& reporter, const char* argv0);

}  // namespace book::quant::bench_sections
