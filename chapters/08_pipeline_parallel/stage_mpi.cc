// The pipeline stage under mpirun (--backend mpi): one stage per process, over chapter 3's MPI
// backend; the real step only.
#include <cmath>
#include <iostream>

#include "chapters/03_collectives/mpi.h"
#include "chapters/08_pipeline_parallel/executor.h"
#include "chapters/08_pipeline_parallel/partition.h"
#include "chapters/08_pipeline_parallel/registry.h"
#include "chapters/08_pipeline_parallel/stage.h"
#include "common/check.h"
#include "common/machine_load.h"
#include "common/table.h"

namespace book::pp::stage {

int run_mpi(const StageOptions& o, int argc, char** argv) {
  coll::MpiSession session(&argc, &argv);
  coll::MpiCommunicator comm;
  BOOK_CHECK(comm.size() == o.stages, "--stages " << o.stages << " but mpirun started "
                                                  << comm.size() << " processes; pass --stages "
                                                  << comm.size() << " or mpirun -np " << o.stages);
  if (comm.rank() == 0) print_machine_load();
  const Workload work = make_workload(o);
  const double single = work.single_loss;
  Table table({"schedule", "p (processes)", "m", "v", "loss", "one device", "loss deviation",
               "bytes per message (rank 0)"});
  for (const std::string& name : o.schedules) {
    const Shape shape{o.stages, o.micro_batches, name == "interleaved" ? o.chunks : 1};
    const Schedule schedule = make_schedule(name, shape);
    auto chunks =
        make_rank_models<float>(work.config, o.batch, shape,
                                even_boundaries(o.layers, shape.virtual_stages()), comm.rank(), 8);
    const RankResult r = execute<float>(comm, schedule, chunks, work.micro);
    const std::uint64_t per_message =
        r.traffic.messages_sent > 0 ? r.traffic.bytes_sent / r.traffic.messages_sent : 0;
    table.add_row({name, std::to_string(shape.stages), std::to_string(shape.micro_batches),
                   std::to_string(shape.chunks), fixed(r.loss, 6), fixed(single, 6),
                   fixed(std::fabs(r.loss - single) / std::fabs(single), 6),
                   std::to_string(per_message)});
  }
  if (comm.rank() == 0)
    std::cout << "\nThe real step as " << comm.size()
              << " MPI processes, one stage each (FP32):\n\n"
              << table.markdown();
  return 0;
}

}  // namespace book::pp::stage
