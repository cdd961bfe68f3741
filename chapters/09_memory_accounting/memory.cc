// bazel run //chapters/09_memory_accounting:memory [-- --tour] [--gpu-gib 80] [--steps 1]
//
// Chapter 9's stage, one README section after another (stage.h lists them): chapter 4's Trainer
// and chapter 6's ZeRO trainer, each memory category measured by a MemoryTracker next to the
// formula's prediction; the tiled attention, the caching allocator, offload and recomputation,
// measured; the OOM ladder on chapter 4's real trainer (each remedy a switch, measured against
// predict_remedies) and for Llama-2 7B on one GPU (the calculator); colocated RL memory; a 7B
// model's memory by category against sequence length and ZeRO stage (the plot's data); MFU against
// HFU. Tables on stdout, CSV and JSON under results/; with --tour, the headline lines at the end.
#include <iostream>
#include <string>

#include "chapters/09_memory_accounting/stage.h"
#include "common/machine_load.h"
#include "common/main.h"
#include "common/table.h"

namespace {

using namespace book::mem::stage;

int body(int argc, char** argv) {
  const StageOptions options = parse_stage_options(argc, argv);
  book::print_machine_load();
  if (options.tour)
    std::cout << "tour-config: 09 | memory --tour: the chapter's run (6 one-step trainings of the "
                 "book's model, 6 one-step ZeRO runs on 2 and 4 thread ranks, a recomputed "
                 "backward, tiled vs chapter 4's attention at T = 10, 1024, 2048, two trainers' "
                 "allocation logs replayed through the caching-allocator simulator, 14 three-step "
                 "trainings of the OOM ladder on chapter 4's trainer, the colocated-RL ledger, "
                 "formulas for the rest); the same as without --tour\n";
  std::cout << "# Chapter 9: where training memory goes\n\n";
  const TourLines measured = measured_section(options);
  const TourLines flash = flash_section(options);
  const TourLines allocator = allocator_section(options);
  const TourLines offload = offload_section(options);
  const TourLines recompute = recompute_section(options);
  const TourLines real_ladder = real_ladder_section(options);
  const TourLines ladder = ladder_section(options);
  const TourLines rl = colocated_rl_section(options);
  sweep_section(options);
  mfu_section(options);
  std::cout << "wrote " << book::results_dir()
            << "/ch09_{measured,ladder,real_ladder,sweep}.{csv,json}, ch09_zero.csv, "
               "ch09_flops.csv, ch09_flash.csv\n";
  // The headline lines, the trainer's measurements first and the calculator's last.
  if (options.tour)
    std::cout << measured << recompute << flash << real_ladder << rl << allocator << offload
              << ladder;
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return book::run_main(argc, argv, body); }
