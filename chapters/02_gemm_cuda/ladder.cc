// bazel run //chapters/02_gemm_cuda:ladder [-- --tour] [-- --sizes=1024,4096] [-- --help]
//
// Everywhere: the counted global-memory traffic of every rung (from the host-side schedules) and
// the compiler's resource report. With a GPU: every rung's correctness against a double
// reference, then GFLOP/s and % of cuBLAS, timed with CUDA events after a warm-up, the median of
// several runs, on inputs rotated through more memory than L2 holds.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "chapters/02_gemm_cuda/ladder_options.h"
#include "chapters/02_gemm_cuda/resources.h"
#include "chapters/02_gemm_cuda/runners.h"
#include "chapters/02_gemm_cuda/schedule.h"
#include "chapters/02_gemm_cuda/tiles.h"
#include "chapters/02_gemm_cuda/wgmma.h"
#include "common/check.h"
#include "common/cuda.h"
#include "common/machine_load.h"
#include "common/main.h"
#include "common/table.h"
#include "common/timer.h"

namespace book::gemm_cuda {
namespace {

std::string si(double x, int digits = 2) {
  const char* units[] = {"", "K", "M", "G", "T", "P"};
  int u = 0;
  while (x >= 1000 && u < 5) x /= 1000, ++u;
  return fixed(x, digits) + units[u];
}

// ---- the counted traffic (no GPU needed)

double traffic_table(int size) {
  const GemmShape s{size, size, size};
  const double flops = 2.0 * size * size * double(size);
  Table table({"rung", "name", "what changed", "A+B elements read", "32 B sectors", "bytes",
               "vs rung 1", "FLOP/byte"});
  double naive_bytes = 0, best_fp32_bytes = 0;
  for (const RungSchedule& rung : ladder_schedules()) {
    try {
      const Traffic t = count_traffic_by_block(rung, s);
      const double bytes = double(t.sector_bytes());
      if (rung.rung == 1) naive_bytes = bytes;
      if (rung.input_bytes == 4 && rung.rung > 1)
        best_fp32_bytes = best_fp32_bytes == 0 ? bytes : std::min(best_fp32_bytes, bytes);
      table.add_row({std::to_string(rung.rung), rung.name, rung.what_changed,
                     si(double(t.a_elements + t.b_elements)),
                     si(double(t.a_sectors + t.b_sectors + t.c_sectors)), si(bytes) + "B",
                     fixed(naive_bytes / bytes, 1) + "x", fixed(flops / bytes, 1)});
    } catch (const NotImplemented& e) {
      table.add_row({std::to_string(rung.rung), rung.name, rung.what_changed, "not started", "", "",
                     "", e.exercise_id()});
    }
  }
  std::cout << "\n## Global-memory traffic at " << size << "^3, counted from the schedules\n\n"
            << "Sectors the SMs request from L2/DRAM, summed over every warp-wide load and store "
               "instruction, before any L1 hit (a sector is 32 bytes). The BF16 rungs read "
               "2-byte inputs.\n\n"
            << table.markdown();
  table.write_csv(results_dir() + "/ch02_traffic.csv");
  return best_fp32_bytes > 0 ? naive_bytes / best_fp32_bytes : 0;
}

// ---- the compiler's report

void resource_table(const std::string& argv0) {
  const std::string path = find_resource_report(argv0);
  std::cout << "\n## Registers and shared memory per kernel (ptxas -v, captured at build time)\n\n";
  if (path.empty()) {
    std::cout << "resource_report.txt not found (set BOOK_RESOURCE_REPORT to its path).\n";
    return;
  }
  std::ifstream file(path);
  const auto kernels = parse_ptxas_report(file);
  std::map<std::string, std::map<std::string, KernelResources>> by_name;
  std::vector<std::string> order;
  for (const KernelResources& k : kernels) {
    const std::string name = short_kernel_name(k.kernel);
    if (!by_name.count(name)) order.push_back(name);
    by_name[name][k.arch] = k;
  }
  // Rung order, not file order.
  const std::vector<std::string> rung_of = {
      "naive",      "coalesced", "shared_tile", "blocktile_1d", "register_2d",
      "vectorised", "warptile",  "wmma",        "mma_pipeline", "wgmma_tma"};
  auto rung_number = [&](const std::string& name) {
    for (std::size_t r = 0; r < rung_of.size(); ++r)
      if (name.rfind(rung_of[r] + "_kernel", 0) == 0) return int(r) + 1;
    return 0;
  };
  std::stable_sort(order.begin(), order.end(), [&](const std::string& x, const std::string& y) {
    return rung_number(x) < rung_number(y);
  });
  Table table({"rung", "kernel", "regs sm_80", "regs sm_90", "spill bytes (st/ld)", "stack",
               "shared/block"});
  for (const std::string& name : order) {
    const auto& arch = by_name[name];
    const KernelResources& any = arch.begin()->second;
    auto regs = [&](const char* a) {
      if (arch.count(a)) return std::to_string(arch.at(a).registers);
      // Rung 10 exists only as sm_90a (wgmma, TMA): shown in the sm_90 column, marked.
      if (const std::string hopper = std::string(a) + "a"; arch.count(hopper))
        return std::to_string(arch.at(hopper).registers) + " (" + hopper + ")";
      return std::string("-");
    };
    std::string smem = std::to_string(any.static_smem) + " B";
    if (name.rfind("mma_pipeline_kernel", 0) == 0)
      smem = std::to_string(TensorTile::kPipelineSmemBytes) + " B (dynamic)";
    if (name.rfind("wgmma_tma_kernel", 0) == 0)  // mbarriers static, the ring dynamic
      smem = std::to_string(any.static_smem) + " + " + std::to_string(WgmmaTile::kSmemBytes) +
             " B (dynamic)";
    table.add_row({std::to_string(rung_number(name)), name, regs("sm_80"), regs("sm_90"),
                   std::to_string(any.spill_stores) + "/" + std::to_string(any.spill_loads),
                   std::to_string(any.stack_bytes) + " B", smem});
  }
  std::cout << table.markdown();
  if (order.size() < 11)
    std::cout << "(a rung missing here is an exercise whose kernel is still a stub)\n";
}

// ---- with a GPU: correctness, then timing

// Why `rung` is not run here: --skip, or a GPU it cannot run on; empty if it runs.
std::string skip_reason(const Rung& rung, const LadderOptions& options) {
  if (std::find(options.skip.begin(), options.skip.end(), rung.name) != options.skip.end())
    return "left out (--skip)";
  return unavailable_reason(rung);
}

// One line on stderr before each rung runs: when a rung hangs and the stage is killed, the log
// says which one (the tables only print at the end).
void progress(const std::string& what, const Rung& rung) {
  std::cerr << "[ladder] " << what << ": rung " << rung.rung << " " << rung.name << std::endl;
}

bool correctness(const std::vector<Rung>& rungs, const LadderOptions& options) {
  const GemmShape s{517, 389, 263};
  std::cout << "\n## Correctness at " << s.m << "x" << s.n << "x" << s.k
            << " (random inputs, C poisoned with NaN, double reference)\n\n";
  Table table({"rung", "name", "wrong elements", "first wrong"});
  bool all_ok = true;
  for (const Rung& rung : rungs) {
    if (const std::string why = skip_reason(rung, options); !why.empty()) {
      table.add_row({std::to_string(rung.rung), rung.name, "skipped", why});
      continue;
    }
    progress("correctness", rung);
    try {
      const Comparison c = check_rung(rung, s, 99);
      all_ok = all_ok && c.bad == 0;
      table.add_row({std::to_string(rung.rung), rung.name, std::to_string(c.bad),
                     c.bad ? c.first + " " + c.pattern : "-"});
    } catch (const NotImplemented& e) {
      table.add_row({std::to_string(rung.rung), rung.name, "not started", e.exercise_id()});
    }
  }
  std::cout << table.markdown();
  return all_ok;
}

struct Timing {
  double seconds = 0;  // median
  bool ran = false;
};

// Median time of `run`, on `copies` rotated sets of buffers (more bytes than L2 holds).
Timing time_rung(const Rung& rung, GemmShape s, int copies, std::vector<DeviceProblem*>& inputs,
                 std::vector<cuda::DeviceBuffer<float>*>& outputs, int repeats) {
  cudaEvent_t start, stop;
  BOOK_CUDA_CHECK(cudaEventCreate(&start));
  BOOK_CUDA_CHECK(cudaEventCreate(&stop));
  auto once = [&](int i) {
    const DeviceProblem& p = *inputs[i % copies];
    rung.run(p.a_for(rung.input), p.b_for(rung.input), outputs[i % copies]->data(), s, nullptr);
  };
  once(0);  // warm-up (and first-call costs: module load, cuBLAS heuristics)
  BOOK_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
    BOOK_CUDA_CHECK(cudaEventRecord(start));
    once(i + 1);
    BOOK_CUDA_CHECK(cudaEventRecord(stop));
    BOOK_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    BOOK_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    times.push_back(ms * 1e-3);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return {median(std::move(times)), true};
}

struct BestRatios {
  double fp32 = 0, bf16 = 0;
  std::string fp32_name, bf16_name;
  int size = 0;
};

BestRatios timing(const std::vector<Rung>& rungs, Cublas& cublas, const LadderOptions& options) {
  std::cout << "\n## Timing (CUDA events, 1 warm-up, median of the runs, rotated inputs)\n\n";
  int l2_bytes = 0;
  BOOK_CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, 0));
  Table table({"size", "rung", "name", "ms", "TFLOP/s", "% of cuBLAS"});
  BestRatios best;
  for (int size : options.sizes) {
    const GemmShape s{size, size, size};
    const double problem_bytes = 3.0 * size * double(size) * 4 + 2.0 * size * double(size) * 2;
    const int copies = std::max(1, std::min(16, int(2.0 * l2_bytes / problem_bytes) + 1));
    std::vector<std::unique_ptr<DeviceProblem>> own_inputs;
    std::vector<std::unique_ptr<cuda::DeviceBuffer<float>>> own_outputs;
    std::vector<DeviceProblem*> inputs;
    std::vector<cuda::DeviceBuffer<float>*> outputs;
    for (int i = 0; i < copies; ++i) {
      own_inputs.push_back(std::make_unique<DeviceProblem>(random_problem(s, 1000 + i)));
      own_outputs.push_back(std::make_unique<cuda::DeviceBuffer<float>>(std::size_t(size) * size));
      inputs.push_back(own_inputs.back().get());
      outputs.push_back(own_outputs.back().get());
    }
    const double flops = 2.0 * size * double(size) * size;
    std::map<DType, double> peer;
    auto row = [&](const Rung& rung, const std::string& name) {
      if (rung.rung >= 1 && rung.rung <= 2 && size > 4096) return;  // minutes per run; skip
      if (const std::string why = skip_reason(rung, options); !why.empty()) {
        table.add_row({std::to_string(size), std::to_string(rung.rung), name, "skipped", "", why});
        return;
      }
      progress("timing at " + std::to_string(size), rung);
      const int repeats = options.tour ? 5 : (size <= 2048 ? 20 : 10);
      Timing t;
      try {
        t = time_rung(rung, s, copies, inputs, outputs, repeats);
      } catch (const NotImplemented& e) {
        table.add_row({std::to_string(size), std::to_string(rung.rung), name, "not started", "",
                       e.exercise_id()});
        return;
      }
      if (rung.rung == 0 && name == rung.name) peer[rung.input] = t.seconds;
      const double vs = peer.count(rung.input) ? peer[rung.input] / t.seconds : 0;
      if (rung.rung > 0 && size == 4096 && rung.input == DType::kF32 && vs > best.fp32)
        best.fp32 = vs, best.fp32_name = name;
      if (rung.rung > 0 && rung.input == DType::kBF16 && vs > best.bf16 &&
          size == options.sizes.back())
        best.bf16 = vs, best.bf16_name = name, best.size = size;
      table.add_row({std::to_string(size), std::to_string(rung.rung), name,
                     fixed(t.seconds * 1e3, 3), fixed(flops / t.seconds * 1e-12, 2),
                     rung.rung == 0 && name != rung.name ? "(reference)" : fixed(100 * vs, 1)});
    };
    for (const Rung& rung : rungs) row(rung, rung.name);
    // TF32 tensor cores on FP32 data: shown for reference, never the peer of an FP32 rung.
    Rung tf32{0, "cublas_sgemm", DType::kF32, "",
              [&cublas](const void* a, const void* b, float* c, GemmShape sh, cudaStream_t st) {
                cublas.sgemm_tf32(static_cast<const float*>(a), static_cast<const float*>(b), c, sh,
                                  st);
              }};
    row(tf32, "cublas_tf32 (not a peer)");
  }
  std::cout << table.markdown();
  table.write_csv(results_dir() + "/ch02_timing.csv");
  return best;
}

int body(int argc, char** argv) {
  const LadderOptions options = parse_ladder_options({argv + 1, argv + argc});
  book::print_machine_load();
  if (options.tour)
    std::cout << "tour-config: 02 | ladder --tour: the global-memory traffic counted at 4096^3 and "
                 "the compiler's report; with a GPU, every rung checked, then timed at 4096 only "
                 "(the chapter's table: 1024 to 8192)\n";
  std::cout << "# Chapter 02: the GEMM ladder on the GPU\n";
  const double ratio = traffic_table(4096);
  resource_table(argv[0]);
  if (ratio > 0)
    std::cout << "\ntour: 02 | global-memory bytes requested, naive vs best FP32 tiled rung "
                 "(4096^3, counted) | "
              << fixed(ratio, 0)
              << "x fewer | tiling reuses each loaded element across a whole tile\n";

  if (cuda::device_count() == 0) {
    std::cout << "\nTiming needs a GPU: " << cuda::no_device_reason()
              << ".\nOn a machine with one, run tools/gpu/run.sh (see tools/gpu/README.md) or "
                 "this stage again.\n";
    return 0;
  }
  std::cout << "\n" << cuda::device_summary();
  if (const char* tf32 = std::getenv("NVIDIA_TF32_OVERRIDE"); tf32 && std::string(tf32) != "0") {
    std::cout << "NVIDIA_TF32_OVERRIDE=" << tf32
              << " would let cuBLAS use TF32 for SGEMM: unset it for a fair FP32 comparison.\n";
    return 1;
  }
  Cublas cublas;
  const std::vector<Rung> rungs = ladder_rungs(cublas);
  std::vector<std::string> names;
  for (const Rung& rung : rungs) names.push_back(rung.name);
  check_skipped_rungs(options.skip, names);
  const bool ok = correctness(rungs, options);
  if (!ok) std::cout << "\nSome rung is wrong: its timing below means nothing until it is fixed.\n";
  const BestRatios best = timing(rungs, cublas, options);
  if (best.fp32 > 0)
    std::cout << "tour: 02 | best FP32 rung (" << best.fp32_name << ") vs cuBLAS SGEMM, 4096^3 | "
              << fixed(best.fp32, 2) << "x | a hand-written SGEMM reaches ~0.9x cuBLAS\n";
  if (best.bf16 > 0)
    std::cout << "tour: 02 | best BF16 rung (" << best.bf16_name << ") vs cuBLAS BF16, "
              << best.size << "^3 | " << fixed(best.bf16, 2)
              << "x | tensor cores need mma + async pipelines to approach cuBLAS\n";
  return ok ? 0 : 1;
}

}  // namespace
}  // namespace book::gemm_cuda

int main(int argc, char** argv) { return book::run_main(argc, argv, book::gemm_cuda::body); }
