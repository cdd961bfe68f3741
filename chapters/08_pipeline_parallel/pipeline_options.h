/// @file
/// The pipeline stage's command line (pipeline.cc), parsed and checked before anything runs.
#pragma once

#include <string>
#include <vector>

namespace book::pp {

/// What the stage runs.
struct Options {
  std::vector<std::string> schedules = {"1f1b"};  ///< the schedules to run, by name
  int stages = 4;                                 ///< p, pipeline ranks (threads)
  int micro_batches = 8;                          ///< m
  int chunks = 2;                                 ///< v of the interleaved schedule
  int layers = 8;                                 ///< transformer blocks
  int d_model = 32;                               ///< model width
  int heads = 4;                                  ///< attention heads
  int batch = 2;                                  ///< sequences per micro-batch
  bool tour = false;                              ///< the tour's short run
  std::string backend = "threads";                ///< threads, or mpi: one stage per process
};

/// Parses the flags (--help lists them) and checks that every schedule asked for can run:
/// d_model a multiple of heads, at least one layer per (virtual) stage, layers that p·v divides
/// for interleaving, m a multiple of p for interleaving and m ≥ p for ZB-H1. Throws book::Error
/// (a UsageError for the flags themselves) naming the value and what to pass instead.
Options parse_options(int argc, const char* const* argv);

}  // namespace book::pp
