// bazel run //chapters/09_memory_accounting:calc -- --model llama2-7b --dp 8 --zero 3 --tp 1
//   --pp 1 --micro-batch 1 --seq 4096 [--recompute selective] [--json]   (--help lists the flags)
//
// The training memory of the rank that needs the most, by category: model states by chapter 6's
// formula, activations by Korthikanti et al. 2022, buffers and overhead as calculator.h states.
#include <iostream>

#include "chapters/09_memory_accounting/calc_cli.h"
#include "common/main.h"

namespace {

int body(int argc, char** argv) {
  const book::mem::CalcRequest r = book::mem::parse_calc_flags(argc, argv);
  const book::mem::Breakdown b = book::mem::calculate(r.setup);
  if (r.json) {
    std::cout << book::mem::to_json(b) << "\n";
    return 0;
  }
  std::cout << book::mem::describe(r.setup) << "\n"
            << "rank parameters (Ψ_rank): " << b.rank_parameters << "\n\n"
            << book::mem::breakdown_table(b).markdown();
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return book::run_main(argc, argv, body); }
