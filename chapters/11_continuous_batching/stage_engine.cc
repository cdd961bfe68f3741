// The stage's section on the real engine ("Preemption by swap"): chapter 4's trained addition
// model served by the engine under a tight KV cache, preempting by recompute and by swap, its
// answers graded against the same sums served one at a time.
#include <algorithm>
#include <iostream>
#include <sstream>
#include <string>

#include "chapters/04_training_baseline/data.h"
#include "chapters/10_paged_attention/served_model.h"
#include "chapters/11_continuous_batching/engine.h"
#include "chapters/11_continuous_batching/stage.h"
#include "common/rng.h"

namespace book::serve::stage {
namespace {

struct Served {
  std::vector<std::vector<int>> tokens;
  int steps = 0, most_running = 0;
  std::int64_t preemptions = 0, rows = 0, bytes_swapped = 0;
  PreemptionStats stats;
};

Served serve(train::Model<float>& model, const std::vector<std::vector<int>>& prompts, int answer,
             int num_blocks, const SchedulerConfig& config) {
  const int block_size = 2;
  kv::PagedKvCache cache(kv::kv_shape_of(model.config()), num_blocks, block_size);
  kv::ModelRunner runner(model, cache, config.token_budget);
  kv::BlockManager blocks(num_blocks, block_size, /*prefix_caching=*/false);
  Engine engine(runner, blocks, config);
  for (const auto& prompt : prompts) engine.submit({prompt, answer, {}, {}});
  Served s;
  while (engine.has_work()) {
    const StepRecord r = engine.step();
    s.most_running = std::max(s.most_running, r.running);
    s.rows += r.decode_rows + r.prefill_rows;
  }
  for (const Completion& c : engine.take_finished()) s.tokens.push_back(c.tokens);
  s.steps = engine.steps();
  s.preemptions = engine.scheduler().preemptions();
  s.stats = engine.scheduler().preemption_stats();
  s.bytes_swapped = engine.swap_bytes_out() + engine.swap_bytes_in();
  return s;
}

}  // namespace

EngineRun run_addition(const std::string& checkpoint, int sums) {
  auto model = kv::load_checkpoint_model(checkpoint);
  const train::AdditionTask task(kv::addition_digits(model->config()));
  Rng rng(2025);
  std::vector<std::vector<int>> prompts;
  std::vector<std::int64_t> want;
  for (int i = 0; i < sums; ++i) {
    const auto [a, b] = task.sample(rng, train::Split::kValidation);
    auto tokens = task.encode(a, b);
    tokens.resize(task.prompt_length());
    prompts.push_back(tokens);
    want.push_back(a + b);
  }
  const int answer = task.answer_length();
  // 32 running, 64 rows per step, 40 blocks of 2: room for 10 whole sums (4 blocks each), so the
  // engine preempts; one at a time on a roomy cache is the reference.
  const Served together = serve(*model, prompts, answer, 40, {32, 64, true});
  const Served alone = serve(*model, prompts, answer, 40, {1, 64, true});
  // The same run preempting by swap, to a host arena of 64 blocks of 2 (room for 16 victims).
  SchedulerConfig swap_config{32, 64, true};
  swap_config.preemption = PreemptionMode::kSwap;
  swap_config.host_blocks = 64;
  const Served swapped = serve(*model, prompts, answer, 40, swap_config);
  EngineRun run;
  run.sums = sums;
  run.steps_continuous = together.steps;
  run.steps_one_at_a_time = alone.steps;
  run.most_running = together.most_running;
  run.preemptions = together.preemptions;
  run.recompute = {together.preemptions, together.stats.dropped_positions, together.rows, 0,
                   together.steps};
  run.swap = {swapped.preemptions, swapped.stats.dropped_positions, swapped.rows,
              swapped.bytes_swapped, swapped.steps};
  run.swapped_out = swapped.stats.swapped_out;
  run.swap_fallbacks = swapped.stats.swap_fallbacks;
  for (int i = 0; i < sums; ++i) {
    run.correct += train::AdditionTask::decode_answer(together.tokens[i].data(), answer) == want[i];
    run.equal_to_alone += together.tokens[i] == alone.tokens[i];
    run.swap_equal_to_alone += swapped.tokens[i] == alone.tokens[i];
  }
  return run;
}

TourLines engine_section(const StageOptions& o) {
  const EngineRun engine = run_addition(o.checkpoint, o.tour ? 200 : 1000);
  std::cout << "## The engine on chapter 4's trained addition model\n\n"
            << engine.sums << " held-out sums through the engine (32 running, 64 rows per step, "
            << "40 KV blocks of 2 tokens): " << engine.correct << " answers right, "
            << engine.equal_to_alone << " of " << engine.sums
            << " token for token equal to the same sum served alone; " << engine.preemptions
            << " preemptions, up to " << engine.most_running << " running; "
            << engine.steps_continuous << " model steps against " << engine.steps_one_at_a_time
            << " one at a time (counted, not timed).\n\n";
  Table modes({"preemption", "preempted", "positions recomputed", "rows run", "KV bytes swapped",
               "steps", "answers equal to alone"});
  const auto mode_row = [&](const std::string& name, const PreemptionCost& c, int equal) {
    modes.add_row({name, std::to_string(c.preemptions), std::to_string(c.dropped_positions),
                   std::to_string(c.rows), std::to_string(c.bytes_swapped), std::to_string(c.steps),
                   std::to_string(equal) + "/" + std::to_string(engine.sums)});
  };
  mode_row("recompute", engine.recompute, engine.equal_to_alone);
  mode_row("swap (host arena of 64 blocks)", engine.swap, engine.swap_equal_to_alone);
  std::cout << "### Recompute vs swap on the same sums\n\n"
            << modes.markdown() << "\nSwap: " << engine.swapped_out
            << " victims to the host arena, " << engine.swap_fallbacks
            << " recomputed because it was full; bytes count K and V both ways (counted, not "
               "timed).\n\n";
  const std::string dir = results_dir();
  modes.write_csv(dir + "/ch11_preemption.csv");
  modes.write_json(dir + "/ch11_preemption.json");

  std::ostringstream tour;
  tour << "tour: 11 | trained addition model through the engine, preempting | " << engine.correct
       << "/" << engine.sums << " right, " << engine.equal_to_alone << "/" << engine.sums
       << " equal to served alone, " << engine.steps_continuous << " vs "
       << engine.steps_one_at_a_time << " steps | batching changes the cost, not the answers\n"
       << "tour: 11 | preemption, recompute vs swap | " << engine.recompute.dropped_positions
       << " positions recomputed vs " << engine.swap.bytes_swapped << " bytes swapped ("
       << engine.recompute.rows << " vs " << engine.swap.rows
       << " rows run) | swap trades recomputation for copies over the bus\n";
  return tour.str();
}

}  // namespace book::serve::stage
