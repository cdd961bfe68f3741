/// @file
/// The machine's own ceilings, measured: FP32 FMA throughput and memory bandwidth.
///
/// The ladder reports every rung as a fraction of these numbers and places it on the roofline
/// (attainable = min(peak, bandwidth × arithmetic intensity)). They are measured here rather than
/// read from a data sheet because a laptop's clock, a VM's share of a core and turbo all move them.
#pragma once

namespace book::gemm {

/// FP32 peak in GFLOP/s with AVX2 FMA on `threads` threads: each thread runs chains of independent
/// vfmadd231ps on 8-float registers (enough chains to cover FMA latency × FMA ports), so only the
/// FMA units limit it. Counts 2 flops per lane per FMA. `threads` must be >= 1.
double measure_fp32_peak_gflops(int threads);

/// The same with AVX-512 (16-float registers), or 0 where the CPU has no AVX-512F.
double measure_fp32_peak_gflops_avx512(int threads);

/// STREAM-like triad a[i] = b[i] + s * c[i] over arrays far larger than the caches, on `threads`
/// threads; returns GB/s (1e9 bytes per second), counting 12 bytes per element as STREAM does.
/// `threads` must be >= 1.
double measure_triad_bandwidth_gbs(int threads);

/// Read-only streaming bandwidth: a sum over one 512 MiB array (16 times a 32 MiB L3; on 2 MiB
/// pages where the kernel allows), split in
/// contiguous parts over `threads` threads, eight independent AVX2 accumulators each; the best of
/// 5 passes, in GB/s (1e9 bytes per second) of bytes read. The ceiling of a kernel that only
/// reads, such as a GEMV (chapter 14), whose rate the triad's mix of 2 reads and 1 write
/// understates or overstates depending on the machine. `threads` must be >= 1.
double measure_read_bandwidth_gbs(int threads);

}  // namespace book::gemm
