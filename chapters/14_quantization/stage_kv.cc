// The stage's section "The INT8 KV cache": bytes per token, requests at once in one budget,
// attention error and accuracy through chapter 11's engine (kv_int8_report.h).
#include <iostream>

#include "chapters/10_paged_attention/served_model.h"
#include "chapters/14_quantization/kv_int8_report.h"
#include "chapters/14_quantization/stage.h"
#include "common/table.h"

namespace book::quant::stage {

void kv_section(const StageOptions& options) {
  std::cout << "\n## The INT8 KV cache\n\n";
  KvInt8ReportOptions o;
  o.checkpoint = kv::runfile(options.checkpoint, options.argv0);
  o.threads = options.threads;
  if (options.tour) {
    o.problems = 200;
    o.calibration = 64;
  }
  const KvInt8Report report = kv_int8_report(o);
  print_kv_int8_report(report, std::cout);
  if (options.tour && report.capacity.size() == 3 && report.accuracy.size() == 2) {
    const KvCapacityRow &fp16 = report.capacity[1], &int8 = report.capacity[2];
    std::cout << "tour: 14 | requests at once in one KV budget, FP16 vs INT8 KV (chapter 10's "
                 "replay) | "
              << fp16.max_running << " vs " << int8.max_running << " ("
              << fixed(static_cast<double>(int8.max_running) / fp16.max_running, 2)
              << "x) | INT8 KV halves bytes per token: about 2x the requests\n"
              << "tour: 14 | held-out sums exact through the engine, FP32 vs INT8 KV | "
              << report.accuracy[0].correct << " vs " << report.accuracy[1].correct << " of "
              << report.accuracy[1].problems << " | an INT8 KV cache costs little accuracy\n";
  }
}

}  // namespace book::quant::stage
