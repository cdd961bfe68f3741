/// @file
/// What this CPU can run, asked once: the vector instruction set that kernels choose between at
/// run time (the build targets x86-64-v3, AVX2 + FMA, so AVX-512 code is compiled per function
/// and chosen here), and the CPU's name for reports.
#pragma once

#include <string>

namespace book {

/// Vector instruction sets, in order: each one includes the ones before it.
enum class Isa { kSse = 0, kAvx = 1, kAvx2 = 2, kAvx512 = 3 };

/// "SSE", "AVX", "AVX2", "AVX-512".
std::string isa_name(Isa isa);

/// The best vector ISA this CPU runs: AVX-512 means F, BW, VL and DQ (every AVX-512 CPU since
/// Skylake-SP and Zen 4); AVX2 means AVX2 and FMA.
Isa cpu_isa();

/// The CPU's model name from /proc/cpuinfo ("AMD EPYC", "Intel(R) Xeon(R) ..."), or "unknown".
std::string cpu_model();

}  // namespace book
