// The pipeline stage, the third dimension: DP × TP × PP = 2 × 2 × 2 on 8 thread ranks, 1F1B, in
// double precision, against one device running both replicas' micro-batches.
#include <cmath>
#include <iostream>
#include <mutex>
#include <span>

#include "chapters/03_collectives/threads.h"
#include "chapters/08_pipeline_parallel/executor.h"
#include "chapters/08_pipeline_parallel/registry.h"
#include "chapters/08_pipeline_parallel/stage.h"
#include "chapters/08_pipeline_parallel/three_d.h"
#include "common/table.h"

namespace book::pp::stage {

double ThreeD::deviation() const { return std::fabs(loss - single_loss) / std::fabs(single_loss); }

ThreeD run_three_d() {
  std::cout << "\nrunning DP x TP x PP = 2 x 2 x 2 on 8 thread ranks (1F1B, double) ...\n";
  train::Config config;
  config.n_layer = 4, config.d_model = 32, config.n_head = 4, config.vocab_size = 12;
  config.context = 11;
  const coll::GridDegrees degrees{2, 2, 2, 1};
  const int m = 4, batch = 2;
  const auto all = random_micro_batches(config, degrees.dp * m, batch, config.context, 9);
  train::Model<double> whole(config, batch);
  whole.init(9);
  ThreeD out;
  out.single_loss = single_device_step(whole, all);
  const Schedule schedule = make_schedule("1f1b", {degrees.pp, m, 1});
  std::mutex mutex;
  coll::run_ranks(8, [&](coll::Communicator& world) {
    Rank3D<double> rank(world, degrees, config, batch, schedule.shape, 9);
    const int dp = rank.grid().coordinates().dp;
    const RankResult r = rank.step(schedule, std::span(all.data() + dp * m, m));
    const std::lock_guard<std::mutex> lock(mutex);
    if (world.rank() == 0)
      out.loss = r.loss, out.tp_all_reduces = rank.tensor_parallel().counts().all_reduces;
  });
  std::cout << "3D: dp x tp x pp = 2 x 2 x 2, 8 thread ranks, 1F1B, m = 4 per replica: loss "
            << fixed(out.loss, 12) << ", one device over all 8 micro-batches "
            << fixed(out.single_loss, 12) << ", relative deviation " << out.deviation()
            << "; rank 0's tensor-parallel all-reduces " << out.tp_all_reduces
            << " (2 blocks x 4 per micro-batch x 4 micro-batches, + 1 per micro-batch for the "
               "vocabulary-parallel embedding)\n";
  return out;
}

}  // namespace book::pp::stage
