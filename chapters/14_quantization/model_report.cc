#include "chapters/14_quantization/model_report.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <memory>
#include <sstream>
#include <thread>

#include "chapters/14_quantization/accuracy.h"
#include "chapters/14_quantization/outliers.h"
#include "common/check.h"

namespace book::quant {

namespace {

const Scheme kInt8{Bits::kInt8, Symmetry::kSymmetric, Granularity::kPerChannel};
const Scheme kInt8Tensor{Bits::kInt8, Symmetry::kSymmetric, Granularity::kPerTensor};

// The sweep's three settings: weight scales and activation scales.
struct Setting {
  Granularity weights;
  ActivationQuant activations;
};
const Setting kSettings[3] = {{Granularity::kPerChannel, ActivationQuant::kPerTensor},
                              {Granularity::kPerChannel, ActivationQuant::kPerToken},
                              {Granularity::kPerTensor, ActivationQuant::kPerTensor}};

const Scheme& weight_scheme(Granularity weights) {
  return weights == Granularity::kPerTensor ? kInt8Tensor : kInt8;
}

std::string w8a8_name(Granularity weights, ActivationQuant activations) {
  return std::string("W8A8 ") + (weights == Granularity::kPerTensor ? "per-tensor W, " : "") +
         name(activations);
}

std::string alpha_text(double alpha) {
  std::ostringstream s;
  s << alpha;
  return s.str();
}

// One model variant (plain or with outliers) and what every scheme on it needs.
class Bench {
 public:
  Bench(const train::Model<float>& base, const ModelQuantOptions& o, bool outliers,
        const EvalSet& set, const std::vector<float>& reference,
        const std::vector<std::vector<int>>& calibration)
      : outliers_(outliers), set_(set), reference_(reference), calibration_(calibration) {
    model_ = clone(base);
    if (outliers)
      inject_outliers(*model_, o.outlier_channels, o.outlier_min, o.outlier_max, o.seed);
    stats_ = calibrate(*model_, calibration_, /*keep_inputs=*/true);
  }

  train::Model<float>& model() { return *model_; }
  const Calibration& stats() const { return stats_; }

  // Quantises `model` (this variant or a transformed copy), evaluates, returns the row.
  SchemeRow row(std::string name, train::Model<float>& model, const Scheme& scheme,
                QuantizeOptions options) {
    const QuantizedModel q = quantize_model(model, scheme, options);
    SchemeRow r{std::move(name),
                outliers_,
                q.block_bits_per_weight(),
                q.model_bits_per_weight(),
                q.block_bytes(),
                q.model_bytes(),
                {}};
    r.quality = evaluate(model, set_, serve(q, model.config()), reference_);
    return r;
  }

  // The same with this variant's calibration.
  SchemeRow row(std::string name, const Scheme& scheme, QuantizeOptions options) {
    options.absmax = stats_.absmax;
    return row(std::move(name), *model_, scheme, std::move(options));
  }

  // SmoothQuant at α: a smoothed copy, recalibrated (its activations changed), W8A8.
  Quality smooth_quality(double alpha, const Setting& setting) {
    auto smoothed = clone(*model_);
    smooth(*smoothed, stats_, alpha);
    QuantizeOptions options;
    options.activations = setting.activations;
    options.absmax = calibrate(*smoothed, calibration_).absmax;
    const QuantizedModel q = quantize_model(*smoothed, weight_scheme(setting.weights), options);
    return evaluate(*smoothed, set_, serve(q, smoothed->config()), reference_);
  }

  SchemeRow smooth_row(double alpha, const Setting& setting) {
    auto smoothed = clone(*model_);
    smooth(*smoothed, stats_, alpha);
    QuantizeOptions options;
    options.activations = setting.activations;
    options.absmax = calibrate(*smoothed, calibration_).absmax;
    return row(
        w8a8_name(setting.weights, setting.activations) + " + SmoothQuant a=" + alpha_text(alpha),
        *smoothed, weight_scheme(setting.weights), options);
  }

 private:
  bool outliers_;
  const EvalSet& set_;
  const std::vector<float>& reference_;
  const std::vector<std::vector<int>>& calibration_;
  std::unique_ptr<train::Model<float>> model_;
  Calibration stats_;
};

}  // namespace

ModelQuantReport run_model_quant(const train::Model<float>& base, const ModelQuantOptions& o,
                                 int threads) {
  BOOK_CHECK(threads >= 0, "run_model_quant: threads " << threads << " must be >= 0 (0: all)");
  if (threads == 0) threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  BOOK_CHECK(o.calibration >= 1 && o.held_out >= 1 && o.alpha_steps >= 1,
             "run_model_quant: calibration " << o.calibration << ", held_out " << o.held_out
                                             << " and alpha_steps " << o.alpha_steps
                                             << " must all be at least 1");
  const train::Config& config = base.config();
  const Scheme int4{Bits::kInt4, Symmetry::kSymmetric, Granularity::kGroup, o.group_size};
  check_scheme(int4, 3 * config.d_model, config.d_model);
  check_scheme(int4, config.d_model, config.d_ff());
  const EvalSet set = make_eval_set(config, o.held_out, o.seed);
  const auto calibration = calibration_sequences(config, o.calibration, o.seed + 1);
  auto fp32 = clone(base);
  const std::vector<float> reference = teacher_forced_logits(*fp32, set.sequences);
  ModelQuantReport report;
  const std::size_t block_weights = static_cast<std::size_t>(config.n_layer) * 2 * config.d_model *
                                    (2 * config.d_model + config.d_ff());
  SchemeRow fp32_row{"FP32",
                     false,
                     32,
                     32,
                     4 * block_weights,
                     4 * static_cast<std::size_t>(config.parameter_count()),
                     {}};
  fp32_row.quality = evaluate(*fp32, set, {}, reference);
  report.rows.push_back(fp32_row);
  for (const bool outliers : {false, true}) {
    Bench bench(base, o, outliers, set, reference, calibration);
    if (outliers || o.sweep_without_outliers) {
      const std::size_t first = report.sweep.size();
      for (const Setting& setting : kSettings)
        for (int i = 0; i <= o.alpha_steps; ++i)
          report.sweep.push_back({static_cast<double>(i) / o.alpha_steps,
                                  setting.activations,
                                  outliers,
                                  setting.weights,
                                  {}});
      // Each point is independent (its own smoothed copy): spread them over threads.
      const int points = static_cast<int>(report.sweep.size() - first);
      const int workers = std::min(points, threads);
      std::atomic<int> next{0};
      std::vector<std::exception_ptr> failed(workers);
      std::vector<std::thread> team;
      for (int w = 0; w < workers; ++w)
        team.emplace_back([&, w] {
          try {
            for (int i; (i = next++) < points;) {
              AlphaPoint& p = report.sweep[first + i];
              p.quality = bench.smooth_quality(p.alpha, {p.weights, p.activations});
            }
          } catch (...) {
            failed[w] = std::current_exception();
            next = points;
          }
        });
      for (std::thread& t : team) t.join();
      for (const std::exception_ptr& e : failed)
        if (e) std::rethrow_exception(e);
    }
    if (outliers) {
      SchemeRow r = fp32_row;
      r.scheme = "FP32 (outliers injected: same function)";
      r.outliers = true;
      r.quality = evaluate(bench.model(), set, {}, reference);
      report.rows.push_back(r);
    }
    report.rows.push_back(bench.row("INT8 per-channel weight-only", kInt8, {}));
    report.rows.push_back(bench.row("INT4 g" + std::to_string(o.group_size) + " RTN", int4, {}));
    for (const Setting& setting : kSettings) {
      QuantizeOptions options;
      options.activations = setting.activations;
      const Scheme& weights = weight_scheme(setting.weights);
      report.rows.push_back(
          bench.row(w8a8_name(setting.weights, setting.activations), weights, options));
      const bool swept = outliers || o.sweep_without_outliers;
      report.rows.push_back(bench.smooth_row(
          swept ? report.best_alpha(setting.activations, outliers, setting.weights) : 0.5,
          setting));
      options.fp32_threshold = o.fp32_threshold;
      report.rows.push_back(bench.row(w8a8_name(setting.weights, setting.activations) +
                                          " + LLM.int8: inputs above " + alpha_text(o.fp32_threshold) +
                                          " in FP32",
                                      weights, options));
    }
    const std::string g = "INT4 g" + std::to_string(o.group_size);
    QuantizeOptions random;
    random.fp32_columns = random_channels(bench.stats(), o.protect_fraction, o.seed + 2);
    report.rows.push_back(bench.row(g + " + random 1% inputs FP32", int4, random));
    QuantizeOptions salient;
    salient.fp32_columns = salient_channels(bench.stats(), o.protect_fraction);
    report.rows.push_back(bench.row(g + " + top-1% inputs by mean abs(x) in FP32", int4, salient));
    auto awq_model = clone(bench.model());
    QuantizeOptions awq_options;
    awq_options.divisors = awq(*awq_model, bench.stats(), int4);
    report.rows.push_back(bench.row(g + " AWQ", *awq_model, int4, awq_options));
  }
  return report;
}

Table ModelQuantReport::table() const {
  Table t({"scheme", "outliers", "bits/weight (blocks)", "bits/param (model)", "block bytes",
           "model bytes", "accuracy", "KL vs FP32", "top-1 agree"});
  for (const SchemeRow& r : rows)
    t.add_row({r.scheme, r.outliers ? "on" : "off", fixed(r.block_bits, 2), fixed(r.model_bits, 2),
               std::to_string(r.block_bytes), std::to_string(r.model_bytes),
               fixed(100 * r.quality.accuracy(), 1) + "%", fixed(r.quality.kl, 5),
               fixed(100 * r.quality.top1, 1) + "%"});
  return t;
}

Table ModelQuantReport::sweep_table() const {
  Table t({"alpha", "weights", "activations", "outliers", "accuracy", "kl", "top1"});
  for (const AlphaPoint& p : sweep)
    t.add_row({fixed(p.alpha, 2),
               p.weights == Granularity::kPerTensor ? "per-tensor" : "per-channel",
               name(p.activations), p.outliers ? "on" : "off", fixed(p.quality.accuracy(), 4),
               fixed(p.quality.kl, 6), fixed(p.quality.top1, 4)});
  return t;
}

double ModelQuantReport::best_alpha(ActivationQuant activations, bool outliers,
                                    Granularity weights) const {
  const AlphaPoint* best = nullptr;
  for (const AlphaPoint& p : sweep)
    if (p.activations == activations && p.outliers == outliers && p.weights == weights &&
        (!best || p.quality.kl < best->quality.kl))
      best = &p;
  BOOK_CHECK(best, "best_alpha: the sweep has no " << name(activations) << " points with outliers "
                                                   << (outliers ? "on" : "off"));
  return best->alpha;
}

}  // namespace book::quant
