// The stage's MPI variant: the same all-reduce table with ranks as processes, and MPI_Allreduce
// (Algorithm::kNative) as the peer in the same run.
//
//   bazel build -c opt //chapters/03_collectives:busbw_mpi
//   mpirun -np 4 --oversubscribe bazel-bin/chapters/03_collectives/busbw_mpi [--max-mib M] [--tour]
//   tools/cluster/cluster.sh run -- "$(readlink -f bazel-bin/chapters/03_collectives/busbw_mpi)"
//     --cluster        (one command line: inside a node vs across nodes, stage_cluster.cc)
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "chapters/03_collectives/busbw_table.h"
#include "chapters/03_collectives/mpi.h"
#include "chapters/03_collectives/stage.h"
#include "common/machine_load.h"
#include "common/main.h"
#include "common/table.h"
#include "common/timer.h"

namespace book::coll {
namespace {

// Seconds per all-reduce: a warm-up call, then three batches of `reps` calls between barriers;
// per batch the slowest rank's time, and the median batch (the machine is shared).
double time_all_reduce(MpiCommunicator& comm, std::vector<float>& data, Algorithm algorithm,
                       int reps) {
  comm.all_reduce(std::span<float>(data), ReduceOp::kSum, algorithm);
  std::vector<double> batches;
  for (int batch = 0; batch < 3; ++batch) {
    comm.barrier();
    Timer timer;
    for (int i = 0; i < reps; ++i)
      comm.all_reduce(std::span<float>(data), ReduceOp::kSum, algorithm);
    comm.barrier();
    double mine = timer.seconds() / reps, slowest = 0;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm.mpi_comm());
    batches.push_back(slowest);
  }
  std::sort(batches.begin(), batches.end());
  return batches[1];
}

int run(int argc, char** argv) {
  // FUNNELED: only this thread calls MPI, and Open MPI takes no locks for other threads.
  MpiSession session(&argc, &argv, MpiThreads::kFunneled);
  const stage::StageOptions options =
      stage::parse_stage_options(stage::BusbwStage::kMpi, argc, argv);
  MpiCommunicator comm;
  const bool tour = options.tour;
  const std::size_t max_bytes = static_cast<std::size_t>(options.max_mib) << 20;
  const bool root = comm.rank() == 0;
  if (root) print_machine_load();
  if (options.cluster) {
    const stage::TourLines tour = stage::cluster_section(options, comm);
    if (root) std::printf("%s", tour.c_str());
    return 0;
  }
  const std::size_t budget = tour ? (16u << 20) : (256u << 20);
  Table table(
      {"size", "algorithm", "time (us)", "algbw (GB/s)", "busbw (GB/s)", "busbw / MPI_Allreduce"});
  // ring_fused runs too, though over MPI its receive still lands in a buffer before the reduce.
  const Algorithm algorithms[] = {Algorithm::kNative, Algorithm::kNaive, Algorithm::kTree,
                                  Algorithm::kRing, Algorithm::kRingFused};
  std::map<std::size_t, double> ring_vs_native;
  std::vector<float> data;
  for (std::size_t bytes : size_sweep(1024, max_bytes, 4)) {
    data.assign(bytes / sizeof(float), 1.0f + static_cast<float>(comm.rank()));
    const int reps = repetitions_for(bytes, budget);
    double native_bus = 0;
    for (Algorithm algo : algorithms) {
      if (root)
        std::fprintf(stderr, "[busbw_mpi] %d ranks, %s, %s x %d ...\n", comm.size(),
                     format_bytes(bytes).c_str(), algorithm_name(algo), reps);
      const double seconds = time_all_reduce(comm, data, algo, reps);
      const double alg = algbw_gbs(bytes, seconds);
      const double bus = alg * all_reduce_bus_factor(comm.size());
      if (algo == Algorithm::kNative) native_bus = bus;
      if (algo == Algorithm::kRing) ring_vs_native[bytes] = bus / native_bus;
      table.add_row(
          {format_bytes(bytes), algo == Algorithm::kNative ? "MPI_Allreduce" : algorithm_name(algo),
           fixed(seconds * 1e6, 1), fixed(alg, 3), fixed(bus, 3), fixed(bus / native_bus, 2)});
    }
  }
  if (!root) return 0;
  std::printf(
      "All-reduce (sum, f32) on %d MPI processes; busbw = algbw x 2(N-1)/N "
      "(nccl-tests); the peer is MPI_Allreduce in the same run\n\n%s\n",
      comm.size(), table.markdown().c_str());
  table.write_csv(results_dir() + "/ch03_busbw_mpi.csv");
  const auto& [big, ratio] = *ring_vs_native.rbegin();
  std::printf(
      "tour: 03 | book ring vs MPI_Allreduce busbw (N=%d processes, %s) | %.2f x | "
      "the ring is what MPI and NCCL run for large messages\n",
      comm.size(), format_bytes(big).c_str(), ratio);
  return 0;
}

}  // namespace
}  // namespace book::coll

int main(int argc, char** argv) { return book::run_main(argc, argv, book::coll::run); }
