// bazel run -c opt //chapters/10_paged_attention:kv [-- --tour] [--requests N] [--budget-tokens N]
//     [--max-len N] [--block-size N] [--seed N] [--system-prompts N] [--system-prompt-tokens N]
//     [--checkpoint FILE]   (--help lists them)
//
// The KV cache measured: what a token costs (counted), a seeded long-tailed workload replayed into
// a fixed KV budget by contiguous servers and by the paged BlockManager, prefix caching on shared
// system prompts, copy-on-write for parallel sampling, and chapter 4's trained addition model
// decoded with the paged cache (graded). Writes CSV/JSON, the block-table pictures and the memory
// plot under results/. The sections are in stage.h, one file each, in the order body() calls them.
#include <iostream>
#include <string>

#include "chapters/10_paged_attention/served_model.h"
#include "chapters/10_paged_attention/stage.h"
#include "common/machine_load.h"
#include "common/main.h"

namespace {

using namespace book::kv::stage;

// What the tour ran, next to the chapter's default run (the README's tables).
void print_tour_config(const StageOptions& o) {
  std::cout << "tour-config: 10 | kv --tour: " << o.requests << " requests replayed into "
            << o.budget_tokens << " KV slots, blocks of " << o.block_size
            << ", no block-size sweep, 200 sums decoded and a 64 + 64-token long decode (the "
               "chapter's run, `kv` without --tour: the same replay, the sweep over blocks of 1 "
               "to 256, 1000 sums and a 128 + 256-token long decode)\n";
}

int body(int argc, char** argv) {
  StageOptions o = parse_stage_options(argc, argv);
  if (o.checkpoint.empty())
    o.checkpoint =
        book::kv::runfile("chapters/10_paged_attention/addition_checkpoint.bin", argv[0]);
  book::print_machine_load();
  if (o.tour) print_tour_config(o);
  std::cout << "# Chapter 10: the KV cache and paged attention\n\n";

  cost_section();
  const ReplayRuns runs = run_replays(o);
  const TourLines paging = paging_section(o, runs);
  const TourLines prefix = prefix_section(o);
  copy_on_write_section(o);
  const TourLines decoding = decoding_section(o);
  pictures_section(runs);
  std::cout << paging << prefix << decoding;
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return book::run_main(argc, argv, body); }
