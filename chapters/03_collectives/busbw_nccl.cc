// The stage on GPUs: ncclAllReduce through the Communicator, one MPI process per GPU, in the same
// nccl-tests-style table (time, algbw, busbw). Built here (no GPU needed), run on a GPU machine:
//
//   mpirun -np 8 bazel-bin/chapters/03_collectives/busbw_nccl            # 8 GPUs, one node
//   mpirun -np 16 -H node1:8,node2:8 bazel-bin/chapters/03_collectives/busbw_nccl
#include <cuda_runtime_api.h>

#include <cstdio>
#include <string>

#include "chapters/03_collectives/busbw_table.h"
#include "chapters/03_collectives/nccl_mpi.h"
#include "chapters/03_collectives/stage.h"
#include "common/cuda.h"
#include "common/machine_load.h"
#include "common/main.h"
#include "common/table.h"
#include "common/timer.h"

namespace book::coll {
namespace {

int run(int argc, char** argv) {
  // FUNNELED: only this thread calls MPI, and Open MPI takes no locks for other threads.
  MpiSession session(&argc, &argv, MpiThreads::kFunneled);
  const stage::StageOptions options =
      stage::parse_stage_options(stage::BusbwStage::kNccl, argc, argv);
  MpiCommunicator mpi;
  const std::size_t max_bytes = static_cast<std::size_t>(options.max_mib) << 20;
  auto nccl = nccl_over_mpi(mpi);
  const bool root = mpi.rank() == 0;
  if (root) print_machine_load();
  if (root) std::printf("%s", cuda::device_summary().c_str());
  void* device = nullptr;
  BOOK_CUDA_CHECK(cudaMalloc(&device, max_bytes));
  BOOK_CUDA_CHECK(cudaMemset(device, 0, max_bytes));
  Table table({"size", "time (us)", "algbw (GB/s)", "busbw (GB/s)"});
  for (std::size_t bytes : size_sweep(1024, max_bytes, 4)) {
    const Buffer data(device, bytes / sizeof(float), DType::kF32);
    const int reps = repetitions_for(bytes, std::size_t{8} << 30);
    nccl->all_reduce(data, ReduceOp::kSum, Algorithm::kNative);  // warm-up
    mpi.barrier();
    Timer timer;
    for (int i = 0; i < reps; ++i) nccl->all_reduce(data, ReduceOp::kSum, Algorithm::kNative);
    double mine = timer.seconds() / reps, slowest = 0;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, mpi.mpi_comm());
    const double alg = algbw_gbs(bytes, slowest);
    table.add_row({format_bytes(bytes), fixed(slowest * 1e6, 1), fixed(alg, 2),
                   fixed(alg * all_reduce_bus_factor(mpi.size()), 2)});
    if (root) std::fprintf(stderr, "[busbw_nccl] %s done\n", format_bytes(bytes).c_str());
  }
  BOOK_CUDA_CHECK(cudaFree(device));
  if (root)
    std::printf("ncclAllReduce (sum, f32) on %d GPUs; busbw = algbw x 2(N-1)/N (nccl-tests)\n\n%s",
                mpi.size(), table.markdown().c_str());
  return 0;
}

}  // namespace
}  // namespace book::coll

int main(int argc, char** argv) { return book::run_main(argc, argv, book::coll::run); }
