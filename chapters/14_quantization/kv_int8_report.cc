#include "chapters/14_quantization/kv_int8_report.h"

#include "chapters/10_paged_attention/kv_cache.h"
#include "chapters/10_paged_attention/model_runner.h"
#include "chapters/10_paged_attention/replay.h"
#include "chapters/10_paged_attention/served_model.h"
#include "chapters/10_paged_attention/workload.h"
#include "chapters/14_quantization/kv_int8_calibrate.h"
#include "chapters/14_quantization/kv_int8_measure.h"
#include "common/check.h"
#include "common/table.h"

namespace book::quant {
namespace {

// Bytes per token counted on real caches of 3 blocks of 5 (bytes() over the slots), not taken
// from the formula, so a cache that stored more than it should would show here.
KvBytesRow bytes_row(std::string model, const kv::KvShape& shape) {
  const int blocks = 3, block_size = 5, slots = blocks * block_size;
  const kv::PagedKvCache fp32(shape, blocks, block_size);
  const std::size_t heads = static_cast<std::size_t>(shape.n_layer) * shape.n_head;
  const kv::PagedKvCache int8(shape, blocks, block_size,
                              {std::vector<float>(heads, 1.0f), std::vector<float>(heads, 1.0f)});
  KvBytesRow row{std::move(model), shape};
  row.fp32 = static_cast<std::int64_t>(fp32.bytes()) / slots;
  row.fp16 = shape.numbers_per_token() * 2;
  row.int8 = static_cast<std::int64_t>(int8.bytes()) / slots;
  row.scale_bytes = static_cast<std::int64_t>(int8.scale_bytes());
  return row;
}

std::string shape_text(const kv::KvShape& s) {
  return std::to_string(s.n_layer) + " × " + std::to_string(s.n_head) + " × " +
         std::to_string(s.head_dim);
}

}  // namespace

KvInt8Report kv_int8_report(const KvInt8ReportOptions& options) {
  BOOK_CHECK(options.problems >= 1 && options.calibration >= 1 && options.requests >= 1,
             "kv_int8_report: problems (" << options.problems << "), calibration ("
                                          << options.calibration << ") and requests ("
                                          << options.requests << ") must each be >= 1");
  KvInt8Report report;
  report.margin = options.margin;
  report.calibration_sequences = options.calibration;
  auto model = kv::load_checkpoint_model(options.checkpoint);
  const kv::KvShape addition = kv::kv_shape_of(model->config());
  const kv::KvShape opt13b{40, 40, 128};  // the vLLM paper's example (chapter 10's table)
  report.bytes.push_back(bytes_row("chapter 4's addition GPT", addition));
  report.bytes.push_back(bytes_row("OPT-13B shape", opt13b));

  // (2) The same bytes, more tokens: a budget of 16,384 FP16 tokens of OPT-13B (12.5 GiB, what an
  // A100-40GB keeps for KV next to 26 GB of FP16 weights) replayed at each precision's bytes.
  const KvBytesRow& big = report.bytes.back();
  report.budget_model = big.model;
  report.budget_bytes = 16384 * big.fp16;
  kv::WorkloadOptions workload;
  workload.requests = options.requests;
  const auto requests = kv::make_workload(workload);
  std::vector<kv::ReplayResult> replays;
  for (const auto& [name, bytes] : {std::pair<const char*, std::int64_t>{"fp32", big.fp32},
                                    {"fp16", big.fp16},
                                    {"int8", big.int8}}) {
    kv::PagedReplayOptions paged;
    paged.budget_tokens = report.budget_bytes / bytes;
    replays.push_back(kv::replay_paged(requests, paged));
    const kv::ReplayResult& r = replays.back();
    report.capacity.push_back(
        {name, bytes, paged.budget_tokens, r.max_running, r.mean_running, r.steps, r.preemptions});
  }
  report.capacity_note = kv::without_pressure(replays);

  // (3) Attention error; (4) accuracy through chapter 11's engine. Scales from training-split
  // sums, graded on held-out ones.
  const auto calibration = addition_calibration(model->config(), options.calibration, 14);
  const kv::KvInt8Scales scales = calibrate_kv_int8(*model, calibration, options.margin);
  const AdditionProblems problems =
      addition_problems(model->config(), options.problems, train::Split::kValidation, 2025);
  report.errors = int8_attention_error_model(*model, scales, problems.sequences, options.threads);
  report.errors.push_back(
      int8_attention_error_random(addition.n_head, addition.head_dim, 400, 7, options.threads));
  report.errors.push_back(int8_attention_error_random(8, 128, 200, 8, options.threads));
  const EngineAnswers fp32 = serve_addition(*model, problems, nullptr, options.threads);
  EngineAnswers int8 = serve_addition(*model, problems, &scales, options.threads);
  for (std::size_t i = 0; i < fp32.tokens.size(); ++i)
    int8.row.equal_to_fp32 += int8.tokens[i] == fp32.tokens[i];
  report.accuracy = {fp32.row, int8.row};
  report.accuracy.front().equal_to_fp32 = fp32.row.problems;
  return report;
}

void print_kv_int8_report(const KvInt8Report& report, std::ostream& out) {
  out << "### INT8 KV cache: bytes per token (counted on real caches; FP16 from the formula)\n\n";
  Table bytes({"model", "layers × heads × head_dim", "fp32 B/token", "fp16 B/token", "int8 B/token",
               "int8 / fp16", "int8 / fp32", "scales (once)"});
  for (const KvBytesRow& r : report.bytes)
    bytes.add_row({r.model, shape_text(r.shape), std::to_string(r.fp32), std::to_string(r.fp16),
                   std::to_string(r.int8), fixed(static_cast<double>(r.int8) / r.fp16, 3),
                   fixed(static_cast<double>(r.int8) / r.fp32, 3),
                   std::to_string(r.scale_bytes) + " B"});
  out << bytes.markdown() << "\n";

  out << "### Requests at once in the same KV budget (chapter 10's paged replay, blocks of 16)\n\n"
      << "Budget " << fixed(report.budget_bytes / 1073741824.0, 2) << " GiB of "
      << report.budget_model
      << " keys and values; the workload is chapter 10's (vLLM-paper lengths).\n\n";
  Table capacity({"precision", "B/token", "KV slots", "max running", "mean running (under load)",
                  "steps", "preemptions"});
  for (const KvCapacityRow& r : report.capacity)
    capacity.add_row({r.precision, std::to_string(r.bytes_per_token),
                      std::to_string(r.budget_tokens), std::to_string(r.max_running),
                      fixed(r.mean_running, 1), std::to_string(r.steps),
                      std::to_string(r.preemptions)});
  out << capacity.markdown() << "\n";
  if (!report.capacity_note.empty()) out << report.capacity_note << "\n\n";

  out << "### Attention output, INT8 kernel vs FP32 kernel on the same queries\n\n"
      << "Static per-(layer, head, K/V) scales, calibrated on " << report.calibration_sequences
      << " training-split sums (margin " << fixed(report.margin, 2)
      << "); random data uses its own absmax.\n\n";
  Table errors({"data", "outputs", "max abs error", "max abs output", "relative RMS error"});
  for (const KvErrorRow& r : report.errors)
    errors.add_row({r.data, std::to_string(r.outputs), fixed(r.max_abs, 5),
                    fixed(r.max_abs_fp32, 3), fixed(100 * r.rel_rms, 3) + "%"});
  out << errors.markdown() << "\n";

  out << "### Held-out sums through chapter 11's engine (greedy; 40 blocks of 2, preempting)\n\n";
  Table accuracy(
      {"KV cache", "sums", "exact", "accuracy", "same tokens as fp32", "preemptions", "KV bytes"});
  for (const KvAccuracyRow& r : report.accuracy)
    accuracy.add_row({r.precision, std::to_string(r.problems), std::to_string(r.correct),
                      fixed(100.0 * r.correct / r.problems, 1) + "%",
                      std::to_string(r.equal_to_fp32), std::to_string(r.preemptions),
                      std::to_string(r.cache_bytes)});
  out << accuracy.markdown() << "\n";
}

}  // namespace book::quant
