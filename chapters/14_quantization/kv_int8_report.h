/// @file
/// What an INT8 KV cache buys and costs, measured: the bytes a token takes (counted on real
/// caches), how many requests fit at once in a fixed KV budget (chapter 10's replay), how far the
/// INT8 kernel's attention output is from FP32 (the trained addition model's real keys, values and
/// queries, and random data), and the task accuracy of the addition model served through chapter
/// 11's engine with each cache. The `quantize` stage prints it.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "chapters/10_paged_attention/kv_shape.h"

namespace book::quant {

/// Bytes per token of one model shape.
struct KvBytesRow {
  std::string model;      ///< its name
  kv::KvShape shape;      ///< layers, heads, head_dim
  std::int64_t fp32 = 0;  ///< 2 · L · H · d · 4, counted on an FP32 PagedKvCache
  std::int64_t fp16 = 0;  ///< 2 · L · H · d · 2 (the formula: the book has no FP16 cache)
  std::int64_t int8 = 0;  ///< 2 · L · H · d · 1, counted on an INT8 PagedKvCache
  std::int64_t scale_bytes = 0;  ///< the INT8 cache's scales, once per cache: 2 · L · H · 4
};

/// One precision's replay in the fixed budget.
struct KvCapacityRow {
  std::string precision;             ///< "fp32", "fp16" or "int8"
  std::int64_t bytes_per_token = 0;  ///< 4, 2 or 1 byte per number, keys and values
  std::int64_t budget_tokens = 0;    ///< KV slots the budget buys at these bytes per token
  int max_running = 0;               ///< most requests in the batch at once
  double mean_running = 0;           ///< requests in the batch, mean over steps with a queue
  int steps = 0;                     ///< model steps to serve the whole workload
  std::int64_t preemptions = 0;      ///< requests evicted mid-decode
};

/// Attention output error of the INT8 kernel against FP32 on one kind of data.
struct KvErrorRow {
  std::string data;          ///< which keys, values and queries
  std::int64_t outputs = 0;  ///< output numbers compared
  double max_abs = 0;        ///< max |o_int8 − o_fp32|
  double rel_rms = 0;        ///< √(Σ (o_int8 − o_fp32)² / Σ o_fp32²)
  double max_abs_fp32 = 0;   ///< max |o_fp32|, to read max_abs against
};

/// The addition model's held-out sums through chapter 11's engine.
struct KvAccuracyRow {
  std::string precision;         ///< "fp32" or "int8"
  int problems = 0;              ///< sums served
  int correct = 0;               ///< exact sums
  int equal_to_fp32 = 0;         ///< answers token for token equal to the FP32 engine's
  std::int64_t preemptions = 0;  ///< the engine's (a tight cache on purpose)
  std::int64_t cache_bytes = 0;  ///< the engine's KV cache (keys and values)
};

/// Everything the report measured.
struct KvInt8Report {
  std::vector<KvBytesRow> bytes;        ///< the addition model, and a 13B-class shape
  std::int64_t budget_bytes = 0;        ///< the replay's KV budget
  std::string budget_model;             ///< the shape whose bytes per token divide it
  std::vector<KvCapacityRow> capacity;  ///< fp32, fp16, int8
  std::string capacity_note;            ///< empty, or chapter 10's "no pressure" sentence
  std::vector<KvErrorRow> errors;       ///< per layer of the real model, then random data
  std::vector<KvAccuracyRow> accuracy;  ///< fp32, then int8
  double margin = 0;                    ///< the calibration margin used
  int calibration_sequences = 0;        ///< training-split sums the scales came from
};

/// The report's settings.
struct KvInt8ReportOptions {
  std::string checkpoint;  ///< chapter 10's addition_checkpoint.bin
  int problems = 500;      ///< held-out sums served through the engine
  int calibration = 256;   ///< training-split sums the scales are calibrated on
  double margin = 0.0;     ///< calibration margin (kv_int8_scales)
  int requests = 600;      ///< replay workload (chapter 10's defaults)
  int threads = 1;         ///< attention threads
};

/// Measures everything (a few seconds on the addition model). Throws book::Error if the
/// checkpoint is missing or an option is out of range (problems, calibration or requests < 1).
KvInt8Report kv_int8_report(const KvInt8ReportOptions& options);

/// Prints the four tables (Markdown, common/table.h) with a line saying what each measured.
void print_kv_int8_report(const KvInt8Report& report, std::ostream& out);

}  // namespace book::quant
