// mpirun -np <GPUs> bazel-bin/chapters/05_data_parallel/ddp_nccl [--rungs ...] [--steps N]
//
// The ladder with NCCL moving the gradients: one process per GPU, the NCCL unique id broadcast
// over MPI (chapter 3's nccl_over_mpi), every collective staged through GPU memory
// (device_staging.h: the model itself runs on the CPU). It proves the path, not GPU speed.
#include <iostream>

#include "chapters/03_collectives/mpi.h"
#include "chapters/03_collectives/nccl.h"
#include "chapters/03_collectives/nccl_mpi.h"
#include "chapters/05_data_parallel/device_staging.h"
#include "chapters/05_data_parallel/stage.h"
#include "common/cuda.h"
#include "common/main.h"

namespace {

int body(int argc, char** argv) {
  using namespace book::ddp;
  stage::StageOptions options = stage::parse_stage_options(argc, argv);
  options.backend = "nccl";
  book::coll::MpiSession session(&argc, &argv);
  book::coll::MpiCommunicator mpi;
  BOOK_CHECK(book::cuda::device_count() > 0,
             "ddp_nccl: no CUDA device here; NCCL needs one GPU per process");
  std::unique_ptr<book::coll::NcclCommunicator> nccl = book::coll::nccl_over_mpi(mpi);
  int device = 0;
  BOOK_CUDA_CHECK(cudaGetDevice(&device));
  DeviceStagedCommunicator world(std::move(nccl), device);
  const auto rows = stage::run_ladder_mpi(options, world);
  if (world.rank() == 0) stage::report_ladder(options, rows);
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return book::run_main(argc, argv, body); }
