/// @file
/// The `kv` stage in named sections, one per README section and one file each (kv.cc calls them
/// in order): what a token costs (stage_cost.cc), contiguous against paged (stage_paging.cc),
/// prefix caching (stage_prefix.cc), copy-on-write (stage_copy_on_write.cc), decoding with the
/// cache (stage_decoding.cc), the pictures and the plot (stage_pictures.cc). Each prints its
/// tables, writes its files under results/ and hands back its tour lines, which the stage prints
/// together at the end; the command line is parsed in stage_options.cc.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "chapters/10_paged_attention/replay.h"
#include "chapters/10_paged_attention/workload.h"

namespace book::kv::stage {

/// The stage's command line (`bazel run -c opt //chapters/10_paged_attention:kv -- --help`).
struct StageOptions {
  bool tour = false;                   ///< the tour's quick run
  int requests = 600;                  ///< requests in the replay
  std::int64_t budget_tokens = 16384;  ///< KV slots of the replay
  int max_len = 2048;                  ///< the replayed model's context
  int block_size = 16;                 ///< the paged server's block size
  std::uint64_t seed = 10;             ///< the workload's seed
  int system_prompts = 4;              ///< shared system prompts in the prefix-cache workload
  int system_prompt_tokens = 600;      ///< their length
  std::string checkpoint;              ///< the addition checkpoint (default: the BUILD's)
};

/// Parses and checks the command line (book::Flags: unknown flags, bad values and values out of
/// range are a book::UsageError naming the flag). `checkpoint` stays empty unless given; the
/// stage then uses the one its BUILD trains.
StageOptions parse_stage_options(int argc, const char* const* argv);

/// The headline lines `tour: 10 | … | … | …` one section hands back, each ending in a newline.
using TourLines = std::string;

/// "What a token costs": KV bytes per token for chapter 4's model and for real models (the
/// formula, counted).
void cost_section();

/// The memory replay of one workload under every contiguous reservation and the paged server.
struct ReplayRuns {
  std::vector<Request> requests;          ///< the workload
  std::vector<ReplayResult> systems;      ///< contiguous max, pow2, exact; then paged
  std::vector<ReplayResult> block_sizes;  ///< paged with blocks of 1 .. 256
  const ReplayResult& paged() const { return systems.back(); }        ///< paged, default blocks
  const ReplayResult& max_length() const { return systems.front(); }  ///< contiguous, max_len
};

/// Runs the replays of `options` (block sizes only outside the tour).
ReplayRuns run_replays(const StageOptions& options);

/// "Contiguous against paged": the replay's waste table (the vLLM paper's categories plus
/// concurrency), the block-size sweep, their CSV/JSON under results/; tour lines on memory holding
/// tokens, requests at once and waste per request.
TourLines paging_section(const StageOptions& options, const ReplayRuns& runs);

/// "Prefix caching": the workload with shared system prompts replayed with the cache off and on.
TourLines prefix_section(const StageOptions& options);

/// "Copy-on-write": parallel sampling on a BlockManager, blocks with and without sharing.
void copy_on_write_section(const StageOptions& options);

/// "Incremental decoding": chapter 4's trained addition model decoded with the paged cache
/// (graded, and compared with the full pass and the contiguous cache), and a random long-context
/// model with and without the cache.
TourLines decoding_section(const StageOptions& options);

/// The block-table and copy-on-write pictures (SVG, drawn from real BlockManagers) and the
/// replay's memory plot (CSV, and PNG with gnuplot), written under results/.
void pictures_section(const ReplayRuns& runs);

/// "12.3%": a fraction as a percentage with one decimal.
std::string percent(double fraction);

}  // namespace book::kv::stage
