/// @file
/// The calculator's command line (`calc`) as functions, so tests run it without a process.
#pragma once

#include <string>
#include <vector>

#include "chapters/09_memory_accounting/calculator.h"
#include "common/table.h"

namespace book::mem {

/// What a `calc` command line asks for.
struct CalcRequest {
  Setup setup;        ///< the configuration priced
  bool json = false;  ///< --json: one JSON object of bytes instead of the table
};

/// Parses `calc`'s flags: --model (a preset, or "custom" with --layers, --d-model, --heads,
/// --kv-heads, --d-ff, --vocab, --llama), --dp, --zero, --tp, --pp, --sequence-parallel,
/// --micro-batch, --seq, --precision, --recompute, --optimizer, --overhead-gib, --json. A shape
/// flag given with a preset overrides the preset's value. Throws book::UsageError or
/// book::Error naming the flag for bad input.
CalcRequest parse_calc_flags(int argc, char** argv);

/// The breakdown as a table: category, GiB, bytes, bytes per parameter of the rank.
Table breakdown_table(const Breakdown& b);

/// The configuration in one line ("llama2-7b: 6.74e9 parameters; dp 8 zero3 tp 1 pp 1, ...").
std::string describe(const Setup& setup);

}  // namespace book::mem
