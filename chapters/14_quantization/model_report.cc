#include "chapters/14_quantization/model_report.h"

#include <memory>
#include <sstream>

#include "chapters/14_quantization/accuracy.h"
#include "chapters/14_quantization/outliers.h"
#include "common/check.h"

namespace book::quant {

namespace {

const Scheme kInt8{Bits::kInt8, Symmetry::kSymmetric, Granularity::kPerChannel};

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
  Quality smooth_quality(double alpha, ActivationQuant activations) {
    auto smoothed = clone(*model_);
    smooth(*smoothed, stats_, alpha);
    QuantizeOptions options;
    options.activations = activations;
    options.absmax = calibrate(*smoothed, calibration_).absmax;
    const QuantizedModel q = quantize_model(*smoothed, kInt8, options);
    return evaluate(*smoothed, set_, serve(q, smoothed->config()), reference_);
  }

  SchemeRow smooth_row(double alpha, ActivationQuant activations) {
    auto smoothed = clone(*model_);
    smooth(*smoothed, stats_, alpha);
    QuantizeOptions options;
    options.activations = activations;
    options.absmax = calibrate(*smoothed, calibration_).absmax;
    return row(std::string("W8A8 ") + name(activations) + " + SmoothQuant a=" + alpha_text(alpha),
               *smoothed, kInt8, options);
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

ModelQuantReport run_model_quant(const train::Model<float>& base, const ModelQuantOptions& o) {
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
    if (outliers || o.sweep_without_outliers)
      for (const ActivationQuant a : {ActivationQuant::kPerTensor, ActivationQuant::kPerToken})
        for (int i = 0; i <= o.alpha_steps; ++i) {
          const double alpha = static_cast<double>(i) / o.alpha_steps;
          report.sweep.push_back({alpha, a, outliers, bench.smooth_quality(alpha, a)});
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
    for (const ActivationQuant a : {ActivationQuant::kPerTensor, ActivationQuant::kPerToken}) {
      QuantizeOptions options;
      options.activations = a;
      report.rows.push_back(bench.row(std::string("W8A8 ") + name(a), kInt8, options));
      const bool swept = outliers || o.sweep_without_outliers;
      report.rows.push_back(bench.smooth_row(swept ? report.best_alpha(a, outliers) : 0.5, a));
      options.fp32_threshold = o.fp32_threshold;
      report.rows.push_back(bench.row(std::string("W8A8 ") + name(a) + " + LLM.int8 |x|>" +
                                          alpha_text(o.fp32_threshold) + " in FP32",
                                      kInt8, options));
    }
    const std::string g = "INT4 g" + std::to_string(o.group_size);
    QuantizeOptions random;
    random.fp32_columns = random_channels(bench.stats(), o.protect_fraction, o.seed + 2);
    report.rows.push_back(bench.row(g + " + random 1% inputs FP32", int4, random));
    QuantizeOptions salient;
    salient.fp32_columns = salient_channels(bench.stats(), o.protect_fraction);
    report.rows.push_back(bench.row(g + " + top-1% |x| inputs FP32", int4, salient));
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
  Table t({"alpha", "activations", "outliers", "accuracy", "kl", "top1"});
  for (const AlphaPoint& p : sweep)
    t.add_row({fixed(p.alpha, 2), name(p.activations), p.outliers ? "on" : "off",
               fixed(p.quality.accuracy(), 4), fixed(p.quality.kl, 6), fixed(p.quality.top1, 4)});
  return t;
}

double ModelQuantReport::best_alpha(ActivationQuant activations, bool outliers) const {
  const AlphaPoint* best = nullptr;
  for (const AlphaPoint& p : sweep)
    if (p.activations == activations && p.outliers == outliers &&
        (!best || p.quality.kl < best->quality.kl))
      best = &p;
  BOOK_CHECK(best, "best_alpha: the sweep has no " << name(activations) << " points with outliers "
                                                   << (outliers ? "on" : "off"));
  return best->alpha;
}

}  // namespace book::quant
