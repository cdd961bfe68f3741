// The stage's section "MFU vs HFU": model FLOPs per token against the hardware's, which count the
// forward that recomputation runs again.
#include <iostream>

#include "chapters/09_memory_accounting/calculator.h"
#include "chapters/09_memory_accounting/stage.h"
#include "common/table.h"

namespace book::mem::stage {
namespace {

Table flops_table() {
  Table t(
      {"model", "recompute", "model FLOPs/token (MFU)", "hardware FLOPs/token (HFU)", "HFU/MFU"});
  for (const char* name : {"llama2-7b", "gpt3-175b"}) {
    const ParameterBreakdown p = parameters_of(preset(name));
    const double n = static_cast<double>(p.total - p.embedding);  // matmul parameters
    for (Recompute r : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
      const double mfu = model_flops_per_token(n), hfu = hardware_flops_per_token(n, r);
      t.add_row({name, recompute_name(r), fixed(mfu / 1e9, 1) + "e9", fixed(hfu / 1e9, 1) + "e9",
                 fixed(hfu / mfu, 3)});
    }
  }
  return t;
}

}  // namespace

void mfu_section(const StageOptions&) {
  const Table flops = flops_table();
  std::cout << "## MFU vs HFU\n\n" << flops.markdown() << "\n";
  flops.write_csv(results_dir() + "/ch09_flops.csv");
}

}  // namespace book::mem::stage
