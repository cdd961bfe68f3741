// bazel run -c opt //chapters/14_quantization:kv_int8_report [-- --problems N --calibration N
//     --margin M --threads T]
//
// The INT8 KV cache's report on its own (the chapter's `quantize` stage prints the same tables):
// bytes per token, requests at once in a fixed KV budget, attention error, and the addition
// model's accuracy through chapter 11's engine with an INT8 cache against FP32.
#include <iostream>
#include <string>

#include "chapters/10_paged_attention/served_model.h"
#include "chapters/14_quantization/kv_int8_report.h"
#include "common/flags.h"
#include "common/machine_load.h"
#include "common/main.h"

namespace {

int body(int argc, char** argv) {
  book::quant::KvInt8ReportOptions options;
  options.checkpoint = "chapters/10_paged_attention/addition_checkpoint.bin";
  book::Flags flags("kv_int8_report",
                    "The INT8 KV cache: bytes, capacity, attention error, accuracy");
  flags.add("checkpoint", &options.checkpoint, "chapter 10's trained addition checkpoint");
  flags.add("problems", &options.problems, "held-out sums served through the engine")
      .range(1, 100000);
  flags.add("calibration", &options.calibration, "training-split sums the scales come from")
      .range(1, 100000);
  flags.add("margin", &options.margin, "calibration margin: s = absmax · (1 + margin) / 127")
      .range(0, 10);
  flags.add("requests", &options.requests, "requests in the capacity replay").range(1, 100000);
  flags.add("threads", &options.threads, "attention threads").range(1, 256);
  flags.parse(argc, argv);
  book::print_machine_load();
  options.checkpoint = book::kv::runfile(options.checkpoint, argv[0]);
  book::quant::print_kv_int8_report(book::quant::kv_int8_report(options), std::cout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return book::run_main(argc, argv, body); }
