// The wall clock with the split as MPI processes: mpirun -np 2 .../pd --backend mpi. The same
// serve_disaggregated as on thread ranks, handed an MpiCommunicator instead: rank 0 prefills and
// sends each prompt's KV over MPI (shared memory on one machine, TCP across machines), rank 1
// receives and decodes. The colocated peer then runs on rank 0 alone, with the other ranks asleep,
// so that it has the same cores the split had.
#include <mpi.h>
#include <sched.h>

#include <chrono>
#include <iostream>
#include <thread>

#include "chapters/01_gemm_cpu/sgemm.h"
#include "chapters/03_collectives/mpi.h"
#include "chapters/13_disaggregation_speculation/pd/pd_stage.h"
#include "common/check.h"
#include "common/machine_load.h"
#include "common/table.h"

namespace book::pd::stage {
namespace {

// A barrier that sleeps between polls: a rank waiting here leaves its core to rank 0's peer run
// (MPI_Barrier would spin on it). Not timed out: rank 0 arrives after its colocated runs.
void sleeping_barrier(coll::MpiCommunicator& world) {
  MPI_Request request;
  MPI_Ibarrier(world.mpi_comm(), &request);
  for (int done = 0; !done;) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (!done) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

// The cores this process may run on: mpirun binds each of a few ranks to one core by default,
// and a two-thread peer squeezed onto one core measures the binding, not colocation.
int allowed_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
}

std::int64_t total(const std::vector<std::int64_t>& v) {
  std::int64_t sum = 0;
  for (const std::int64_t x : v) sum += x;
  return sum;
}

}  // namespace

void run_mpi_wall_clock(const StageOptions& o, int* argc, char*** argv) {
  coll::MpiSession session(argc, argv);
  coll::MpiCommunicator world;
  const int ranks = world.size(), me = world.rank();
  // Every rank reads the same flags and world size: all refuse alike, none waits for the others.
  BOOK_CHECK(o.prefill >= 1 && o.prefill < ranks,
             "--backend mpi: mpirun -np " << ranks << " with --prefill " << o.prefill << " gives "
                                          << o.prefill << " prefill and " << ranks - o.prefill
                                          << " decode ranks; each pool needs at least 1 (run "
                                          << "mpirun -np " << std::max(2, o.prefill + 1)
                                          << " or more, or lower --prefill)");
  auto model = wall_model();
  const serve::Slo slo{o.wall_slo_ttft_ms, o.wall_slo_tpot_ms};
  if (me == 0) {
    print_machine_load();
    if (const int cores = allowed_cores(); cores > 0 && cores < ranks)
      std::cout << "warning: rank 0 may run on " << cores << " core(s) only (mpirun binds ranks "
                << "to cores by default), so the " << ranks << "-thread colocated peer would "
                << "share it: run mpirun with --bind-to none\n";
    std::cout << "# Chapter 13, section 2: prefill/decode disaggregation as MPI processes\n\n"
              << o.prefill << " prefill + " << ranks - o.prefill << " decode processes (mpirun -np "
              << ranks << "), one thread each; the colocated peer on rank 0 alone afterwards. "
              << o.wall_requests << " requests per run (prompts 64-192, outputs 24-48, Poisson), "
              << "chapter 4's GPT (4 layers, width 128, random weights). SLO: TTFT <= "
              << fixed(slo.ttft_ms, 0) << " ms, TPOT <= " << fixed(slo.tpot_ms, 0) << " ms.\n\n";
  }
  Table table({"rate/s", "system", "threads", "TTFT P50 ms", "TTFT P99 ms", "TPOT P50 ms",
               "TPOT P99 ms", "goodput req/s", "SLO met", "KV MB sent", "tokens = colocated"});
  for (const double rate : o.wall_rates) {
    const auto requests = wall_workload(o.wall_requests, rate, o.seed);
    PdConfig split;
    split.prefill_workers = o.prefill;
    split.decode_workers = ranks - o.prefill;
    split.prefill = wall_worker(1, true, 256);
    split.decode = wall_worker(1, true, 64);
    const gemm::SgemmThreads one(1);
    const PdResult mpi = serve_disaggregated(world, *model, requests, split);
    if (me == 0) {
      struct Row {
        std::string name;
        int threads;
        PdResult result;
      };
      std::vector<Row> rows;
      {
        const gemm::SgemmThreads all_ranks(ranks);
        rows.push_back({"colocated, chunked prefill (budget 64)", ranks,
                        serve_colocated(*model, requests, wall_worker(ranks, true, 64))});
      }
      rows.push_back({"colocated, chunked prefill, 1 thread (control)", 1,
                      serve_colocated(*model, requests, wall_worker(1, true, 64))});
      rows.push_back({std::to_string(o.prefill) + " prefill + " +
                          std::to_string(ranks - o.prefill) + " decode MPI processes",
                      ranks, mpi});
      for (const Row& r : rows) {
        const serve::ServingSummary s = serve::summarize(r.result.timings, slo);
        int same = 0;  // greedy: the split continues each request as the colocated engine does
        for (std::size_t i = 0; i < requests.size(); ++i)
          same += r.result.tokens[i] == rows[0].result.tokens[i];
        table.add_row({fixed(rate, 1), r.name, std::to_string(r.threads), fixed(s.ttft_p50, 1),
                       fixed(s.ttft_p99, 1), fixed(s.tpot_p50, 2), fixed(s.tpot_p99, 2),
                       fixed(s.goodput, 2), fixed(100 * s.slo_attained, 0) + "%",
                       fixed(total(r.result.kv_bytes) / 1e6, 1),
                       std::to_string(same) + "/" + std::to_string(requests.size())});
        if (o.tour && r.threads == ranks && r.name.ends_with("processes"))
          std::cout << "tour: 13 | wall clock at " << fixed(rate, 1) << "/s, 1P+1D as MPI "
                    << "processes: TPOT P99 | " << fixed(s.tpot_p99, 2) << " ms, TTFT P99 "
                    << fixed(s.ttft_p99, 1) << " ms | the same split, KV over MPI\n";
      }
    }
    sleeping_barrier(world);
  }
  if (me == 0) std::cout << table.markdown() << "\n";
}

}  // namespace book::pd::stage
