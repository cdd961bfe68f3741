// The stage's model steps: decoding the trained addition model and a random long-context model
// with the KV cache; and the files: the block-table pictures and the memory plot.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>

#include "chapters/04_training_baseline/data.h"
#include "chapters/10_paged_attention/decoding.h"
#include "chapters/10_paged_attention/kv_report.h"
#include "chapters/10_paged_attention/pictures.h"
#include "chapters/10_paged_attention/served_model.h"
#include "common/rng.h"
#include "common/timer.h"

namespace book::kv::stage {
namespace {

// Prefill each prompt, then feed the full pass's answer tokens one at a time, comparing every
// step's logits with the full forward pass over the same tokens.
double logit_difference(train::Model<float>& model, const std::vector<std::vector<int>>& prompts,
                        const std::vector<std::vector<int>>& answers) {
  const train::Config& config = model.config();
  PagedKvCache cache(kv_shape_of(config), 8, 4);
  ModelRunner runner(model, cache, config.context);
  const std::vector<BlockId> table = {5, 1, 7, 2};  // positions 0..15 in scattered blocks
  double worst = 0;
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    std::vector<int> sequence = prompts[i];
    sequence.insert(sequence.end(), answers[i].begin(), answers[i].end() - 1);
    model.forward(sequence.data(), nullptr, 1, static_cast<int>(sequence.size()));
    for (std::size_t p = prompts[i].size() - 1; p < sequence.size(); ++p) {
      const bool first = p + 1 == prompts[i].size();
      const SequenceChunk chunk{
          first ? std::span(sequence).first(p + 1) : std::span(sequence).subspan(p, 1),
          first ? 0 : static_cast<int>(p), table};
      const auto logits = runner.run({&chunk, 1});
      for (int v = 0; v < config.vocab_size; ++v)
        worst = std::max(
            worst,
            static_cast<double>(std::abs(logits[v] - model.logits()[p * config.vocab_size + v])));
    }
  }
  return worst;
}

}  // namespace

DecodeRun run_decoding(const StageOptions& o) {
  DecodeRun run;
  run.checkpoint = o.checkpoint;
  auto model = load_checkpoint_model(o.checkpoint);
  const train::Config& config = model->config();
  run.sums = o.tour ? 200 : 1000;
  const AdditionProblems problems = held_out_additions(config, run.sums, 2024);
  const auto& prompts = problems.prompts;
  const int answer = problems.answer_tokens;
  BlockManager manager(4096, o.block_size);
  PagedKvCache cache(kv_shape_of(config), manager.num_blocks(), o.block_size);
  ModelRunner runner(*model, cache, 512);
  const auto paged = generate_paged(runner, manager, prompts, answer);
  run.correct = problems.count_correct(paged);
  run.paged_equals_full = paged == generate_full_forward(*model, prompts, answer);
  ContiguousKvCache contiguous(kv_shape_of(config), run.sums, config.context);
  ModelRunner contiguous_runner(*model, contiguous.storage(), 512);
  run.paged_equals_contiguous =
      paged == generate_contiguous(contiguous_runner, contiguous, prompts, answer);
  const std::size_t checked = std::min<std::size_t>(50, prompts.size());
  run.max_logit_difference = logit_difference(*model, {prompts.begin(), prompts.begin() + checked},
                                              {paged.begin(), paged.begin() + checked});

  // A random model long enough for the cache to matter: every new token costs O(n) with the
  // cache, O(n²) without (the full pass recomputes every earlier position's K and V).
  train::Config big;
  big.vocab_size = 256;
  big.context = 1024;
  big.n_layer = 4;
  big.n_head = 8;
  big.d_model = 256;
  auto long_model = random_model(big, 3);
  run.long_prompt = o.tour ? 64 : 128;
  run.long_new = o.tour ? 64 : 256;
  std::vector<std::vector<int>> long_prompts(1, std::vector<int>(run.long_prompt));
  Rng rng(2024);  // the random model's prompt (its own stream since the sums moved to a helper)
  for (int& t : long_prompts[0]) t = static_cast<int>(rng.uniform_int(0, big.vocab_size - 1));
  BlockManager long_manager(256, 16);
  PagedKvCache long_cache(kv_shape_of(big), 256, 16);
  ModelRunner long_runner(*long_model, long_cache, 256);
  Timer cached;
  generate_paged(long_runner, long_manager, long_prompts, run.long_new);
  run.cached_seconds = cached.seconds();
  Timer recompute;
  generate_full_forward(*long_model, long_prompts, run.long_new);
  run.recompute_seconds = recompute.seconds();
  return run;
}

std::vector<std::string> write_pictures(const std::string& dir) {
  // Three sequences growing at once in a pool of 12 blocks of 4: their tables interleave.
  BlockManager tables(12, 4, false);
  tables.add_sequence(0, std::vector<int>(6, 1));
  tables.add_sequence(1, std::vector<int>(3, 2));
  for (int i = 0; i < 4; ++i) tables.append_token(0, 1);
  tables.add_sequence(2, std::vector<int>(7, 3));
  for (int i = 0; i < 2; ++i) tables.append_token(1, 2);
  const PicturePanel layout{"Block tables: logical blocks (top) → physical blocks (pool)",
                            &tables,
                            {0, 1, 2},
                            {"A (10 tokens)", "B (5 tokens)", "C (7 tokens)"}};
  // Copy-on-write: a 6-token prompt forked into two samples, before and after both append.
  BlockManager forked(8, 4, false);
  forked.add_sequence(0, std::vector<int>(6, 1));
  forked.fork(0, 1);
  BlockManager written(8, 4, false);
  written.add_sequence(0, std::vector<int>(6, 1));
  written.fork(0, 1);
  written.append_token(1, 5);  // B's write finds the half block shared: B copies it
  written.append_token(0, 6);  // A is then its only owner: in place
  const PicturePanel before{
      "After fork: both samples share both blocks", &forked, {0, 1}, {"sample A", "sample B"}};
  const PicturePanel after{"After each appends one token: B copied the shared half block",
                           &written,
                           {0, 1},
                           {"sample A", "sample B"}};
  const std::vector<std::pair<std::string, std::vector<PicturePanel>>> files = {
      {dir + "/ch10_block_table.svg", {layout}},
      {dir + "/ch10_copy_on_write.svg", {before, after}}};
  std::vector<std::string> written_paths;
  for (const auto& [path, panels] : files) {
    std::ofstream(path) << block_tables_svg(panels);
    written_paths.push_back(path);
  }
  return written_paths;
}

std::string plot_memory(const ReplayRuns& runs, const std::string& dir) {
  const ReplayResult& contiguous = runs.max_length();
  const ReplayResult& exact = runs.systems[2];
  const ReplayResult& paged = runs.paged();
  const std::size_t steps =
      std::max({contiguous.timeline.size(), exact.timeline.size(), paged.timeline.size()});
  Table csv({"step", "contiguous_stored", "contiguous_reserved", "exact_stored", "exact_reserved",
             "paged_stored", "paged_allocated"});
  auto cell = [](const ReplayResult& r, std::size_t i, bool stored) -> std::string {
    if (i >= r.timeline.size()) return "NaN";
    const auto& s = r.timeline[i];
    return fixed(100.0 * static_cast<double>(stored ? s.stored : s.allocated) /
                     static_cast<double>(r.budget_tokens),
                 2);
  };
  for (std::size_t i = 0; i < steps; ++i)
    csv.add_row({std::to_string(i + 1), cell(contiguous, i, true), cell(contiguous, i, false),
                 cell(exact, i, true), cell(exact, i, false), cell(paged, i, true),
                 cell(paged, i, false)});
  const std::string data = dir + "/ch10_memory_timeline.csv", png = dir + "/ch10_memory.png";
  csv.write_csv(data);
  const std::string script =
      "set terminal pngcairo size 900,500; set output '" + png +
      "'; set datafile separator ','; set datafile missing 'NaN'; set key below maxrows 2;"
      " set yrange [0:105]; set xlabel 'model step (one token per running request)';"
      " set ylabel '% of the KV budget'; set title '" +
      std::to_string(runs.requests.size()) + " requests into " +
      std::to_string(paged.budget_tokens) +
      " KV slots: tokens stored (solid) vs memory taken (dashed)';"
      " plot '" +
      data +
      "' u 1:6 skip 1 w l lw 2 lc rgb '#1f77b4' t 'paged (blocks of 16): stored',"
      " '' u 1:7 skip 1 w l dt 2 lc rgb '#1f77b4' t 'paged: allocated',"
      " '' u 1:2 skip 1 w l lw 2 lc rgb '#d62728' t 'contiguous, max length: stored',"
      " '' u 1:3 skip 1 w l dt 2 lc rgb '#d62728' t 'contiguous, max length: reserved',"
      " '' u 1:4 skip 1 w l lw 2 lc rgb '#2ca02c' t 'contiguous, exact (oracle): stored'";
  const std::string command = "gnuplot -e \"" + script + "\" 2>/dev/null";
  if (std::system(command.c_str()) != 0)
    return data + " (plot skipped: gnuplot not found; apt-get install gnuplot-nox)";
  return data + ", " + png;
}

}  // namespace book::kv::stage
