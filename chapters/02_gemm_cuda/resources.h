/// @file
/// The compiler's resource report (ptxas -v), parsed: registers, spills and shared memory of
/// every kernel for every architecture. The report is captured at build time by the
/// `resource_report` genrule; this reads it. Plain C++.
#pragma once

#include <istream>
#include <string>
#include <vector>

namespace book::gemm_cuda {

/// What ptxas reported for one kernel on one architecture.
struct KernelResources {
  std::string kernel;    ///< Demangled name, e.g. "...::warptile_kernel(float const*, ...)".
  std::string arch;      ///< e.g. "sm_90".
  int registers = 0;     ///< Registers per thread.
  int stack_bytes = 0;   ///< Stack frame per thread.
  int spill_stores = 0;  ///< Bytes of register spills stored (0 is what you want).
  int spill_loads = 0;   ///< Bytes of register spills loaded.
  int static_smem = 0;   ///< Static shared memory per block in bytes (dynamic is not listed).
};

/// Parses ptxas -v output ("Compiling entry function 'K' for 'sm_XX'", then the stack/spill
/// line and the "Used N registers, ... bytes smem" line). Unrelated lines are ignored.
std::vector<KernelResources> parse_ptxas_report(std::istream& report);

/// The short name of a kernel: the identifier before its parameter list, with template
/// arguments, e.g. "mma_pipeline_kernel<true>".
std::string short_kernel_name(const std::string& demangled);

/// Where the report is: $BOOK_RESOURCE_REPORT, or next to the stage under `bazel run`
/// (runfiles), or next to the executable (tools/gpu/pack.sh copies it there). Empty if none.
std::string find_resource_report(const std::string& argv0);

}  // namespace book::gemm_cuda
