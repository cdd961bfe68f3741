/// @file
/// The `kv` stage's command line (`bazel run -c opt //chapters/10_paged_attention:kv -- --help`),
/// parsed and checked apart from the stage so that a test can fuzz it.
#pragma once

#include <cstdint>
#include <string>

namespace book::kv::stage {

/// The stage's command line.
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

}  // namespace book::kv::stage
