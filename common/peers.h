/// @file
/// Peers at their best: the one place that makes the libraries the book measures itself against
/// (OpenBLAS, BLIS, libtorch's ATen kernels) run their best code path on this CPU, checks that
/// they still compute right answers there, and says which configuration ran.
///
/// Why it is needed. Those libraries pick their kernels from the CPU when they load, and they
/// can get it wrong: Debian's OpenBLAS 0.3.21 does not know Sapphire Rapids and runs its SSE3
/// `Prescott` kernels there (3× slower than its AVX-512 ones), BLIS 0.9 runs its AVX2 `zen3`
/// kernels on AVX-512 AMD CPUs, and PyTorch 1.13's ATen stays on AVX2 unless told otherwise. A
/// ratio against a peer on its fallback kernels is a flattering, wrong headline.
///
/// How. Each library reads an environment variable when it loads or first runs
/// (`OPENBLAS_CORETYPE`, `BLIS_ARCH_TYPE`, `ATEN_CPU_CAPABILITY`). So a program that times a peer
/// calls use_peers_at_their_best() first thing in `main`: it compares what each loaded library
/// picked with the best vector ISA the CPU has; where a library picked less, it starts a copy of
/// the program with the better setting that only checks the library's GEMM against a
/// double-precision reference (a core that computes wrong results or crashes is not used: some
/// older OpenBLAS builds do on some CPUs), then starts the program again (execv) with the
/// settings that passed. Nothing else in the program changes.
///
/// \code
/// int main(int argc, char** argv) {
///   book::peers::use_peers_at_their_best(argc, argv);   // may restart the program once
///   return book::run_main(argc, argv, body);
/// }
/// ... std::cout << book::peers::openblas_description() << "\n";
/// // "OpenBLAS 0.3.21, core SkylakeX (it chose Prescott itself), checked"
/// \endcode
///
/// Environment a reader may set:
/// | variable | effect |
/// |---|---|
/// | `BOOK_PEERS=as-is` | change nothing: each library keeps its own choice (descriptions and
/// ratios say "as-is") | | `BOOK_PEERS_OPENBLAS=<core>` | use this OpenBLAS core (still checked),
/// e.g. `Haswell` for a like-for-like AVX2 comparison | | `BOOK_PEERS_BLIS=<arch>` | use this BLIS
/// configuration (still checked), e.g. `haswell` |
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/cpu.h"
#include "common/table.h"

namespace book::peers {

/// The ISA an OpenBLAS core's SGEMM kernels use ("Prescott" -> SSE, "Haswell" and "Zen" -> AVX2,
/// "SkylakeX", "Cooperlake", "SapphireRapids" -> AVX-512). Unknown names count as SSE.
Isa openblas_core_isa(std::string_view core);

/// OpenBLAS cores to try on a CPU whose best ISA is `cpu`, best first, down to (not including)
/// the ISA of the core `chosen` that OpenBLAS picked itself: empty when its own choice is already
/// the best. `amd` picks "Zen" over "Haswell" for AVX2.
std::vector<std::string> openblas_cores_to_try(Isa cpu, bool amd, std::string_view chosen);

/// The ISA of a BLIS configuration ("skx" -> AVX-512, "haswell"/"zen*" -> AVX2, "sandybridge" and
/// the older AMD ones -> AVX, others -> SSE).
Isa blis_arch_isa(std::string_view arch);

/// BLIS configurations to try, best first, down to (not including) the ISA of `chosen`.
std::vector<std::string> blis_archs_to_try(Isa cpu, std::string_view chosen);

/// Call first in main() of every program that times a peer. Configures the peers this program
/// has loaded (OpenBLAS, BLIS; ATen through the environment) as described in the file comment;
/// may start the program again with the same arguments. Never throws: when a peer cannot be
/// configured, the program runs with the library's own choice and the descriptions say so.
void use_peers_at_their_best(int argc, char** argv);

/// One loaded peer's configuration, after use_peers_at_their_best().
struct PeerConfig {
  std::string library;     ///< "OpenBLAS", "BLIS"
  std::string version;     ///< e.g. "0.3.21"
  std::string kernels;     ///< the core or configuration that runs, e.g. "SkylakeX"
  std::string own_choice;  ///< what the library picked by itself on this CPU
  Isa isa = Isa::kSse;     ///< the ISA of `kernels`
  bool checked = false;    ///< its GEMM matched a double-precision reference here
  bool at_best = false;    ///< its GEMM is right and uses the best ISA this CPU has
  std::string note;        ///< why not at its best, or how it was chosen
};

/// The loaded peers' configurations (empty when the program loads none).
std::vector<PeerConfig> peer_configs();

/// "OpenBLAS 0.3.21, core SkylakeX (AVX-512; it chose Prescott itself), checked", or
/// "OpenBLAS not loaded".
std::string openblas_description();

/// "BLIS 0.9.0, configuration skx (AVX-512; it chose zen3 itself), checked", or "BLIS not loaded".
std::string blis_description();

/// True when every loaded peer runs at its best (a ratio against it is a result).
bool all_at_best();

/// "" when all_at_best(); otherwise a warning to print beside every ratio, naming each peer
/// that is not at its best and why ("peer not at its best: OpenBLAS core Prescott (SSE) on an
/// AVX-512 CPU: BOOK_PEERS=as-is").
std::string not_at_best_warning();

/// The kernels a loaded peer runs ("SkylakeX" for library "OpenBLAS"), or "not loaded".
std::string kernels_of(const std::string& library);

/// "1.09x OpenBLAS" when every loaded peer runs at its best; otherwise the ratio is marked as no
/// result: "1.09x OpenBLAS (not a result: peer not at its best)". Two decimals.
std::string ratio_against(double ratio, const std::string& peer);

/// One row per loaded peer (library, version, kernels, ISA, own choice, checked, at its best,
/// note) plus the CPU: for the stages' JSON results.
Table peers_table();

/// How many threads OpenBLAS uses now, or 0 when it is not loaded.
int openblas_threads();

/// Sets OpenBLAS's thread count when it is loaded (a no-op otherwise): libtorch's peers set it
/// so that intra-op threads × BLAS threads never exceed the cores the peer is given.
void set_openblas_threads(int threads);

}  // namespace book::peers
