// The stage's section "Round to nearest": every scheme on an LLM-like matrix and on a trained one.
#include <fstream>
#include <iostream>

#include "chapters/04_training_baseline/parameters.h"
#include "chapters/10_paged_attention/served_model.h"
#include "chapters/14_quantization/model_quant.h"
#include "chapters/14_quantization/schemes.h"
#include "chapters/14_quantization/stage.h"
#include "common/rng.h"
#include "common/table.h"

namespace book::quant::stage {

std::unique_ptr<train::Model<float>> trained_model(const StageOptions& options) {
  return kv::load_checkpoint_model(kv::runfile(options.checkpoint, options.argv0));
}

namespace {

// A [rows][cols] matrix like a trained LLM's: Gaussian (std 0.02, GPT-2's init scale) with a few
// large values, which is what makes one scale per tensor costly.
std::vector<float> llm_like_matrix(int rows, int cols, std::uint64_t seed) {
  book::Rng rng(seed);
  std::vector<float> w(static_cast<std::size_t>(rows) * cols);
  for (float& x : w) x = static_cast<float>(0.02 * rng.normal());
  for (int i = 0; i < rows / 16; ++i)  // one value in 16·cols ten times the spread
    w[static_cast<std::size_t>(rng.uniform() * (w.size() - 1))] *= 10;
  return w;
}

book::Table scheme_table(const std::string& matrix, std::span<const float> w, int rows, int cols,
                         std::vector<SchemeError>* rows_out) {
  book::Table table({"matrix", "scheme", "bits/weight", "bytes", "vs FP32", "vs FP16",
                     "max abs error", "worst / (s/2)", "relative RMS", "SQNR dB"});
  const double fp32 = 4.0 * rows * cols;
  for (const Scheme& scheme : stage_schemes(cols)) {
    const SchemeError e = measure_scheme(w, rows, cols, scheme);
    table.add_row({matrix, e.scheme, book::fixed(e.bits_per_weight, 3), std::to_string(e.bytes),
                   book::fixed(fp32 / e.bytes, 2) + "x", book::fixed(fp32 / 2 / e.bytes, 2) + "x",
                   book::fixed(e.max_abs_error, 5), book::fixed(e.worst_vs_bound, 3),
                   book::fixed(e.relative_rms, 4), book::fixed(e.sqnr_db, 1)});
    rows_out->push_back(e);
  }
  return table;
}

void write_error_plot(const std::vector<SchemeError>& random_rows, const std::string& stem) {
  const std::string data = stem + ".dat", script = stem + ".gp", png = stem + ".png";
  {
    std::ofstream out(data);
    for (const SchemeError& e : random_rows)
      out << e.bits_per_weight << " " << e.sqnr_db << " \"" << e.scheme << "\"\n";
    std::ofstream gp(script);
    gp << "set terminal pngcairo size 800,500 font ',10'\nset output '" << png << "'\n"
       << "set title 'Round to nearest on a 1024 x 1024 LLM-like matrix: error vs bits'\n"
       << "set xlabel 'bits per weight (scales included)'\n"
       << "set ylabel 'SQNR (dB, higher is better)'\nset grid\nset key off\n"
       << "set xrange [3.5:9]\n"
       << "plot '" << data << "' using 1:2 with points pt 7 ps 1.5 lc rgb '#377eb8', \\\n"
       << "     '" << data << "' using 1:2:3 with labels offset 0,1 font ',8'\n";
  }
  std::cout << book::run_gnuplot(script, png, data) << "\n";
}

}  // namespace

void schemes_section(const StageOptions& options) {
  std::cout << "\n## Round to nearest: what each scheme costs and loses\n\n";
  const int n = options.tour ? 256 : 1024;
  std::vector<SchemeError> random_rows, model_rows;
  const std::vector<float> w = llm_like_matrix(n, n, 14);
  std::cout << scheme_table("random " + std::to_string(n) + "²", w, n, n, &random_rows).markdown();
  const auto model = trained_model(options);
  const auto tensors = book::train::bind(model->layout(), model->params().data());
  const book::train::Config& config = model->config();
  const std::vector<float> proj =
      out_by_in(tensors.blocks[0].w_proj, config.d_ff(), config.d_model);
  std::cout << "\n"
            << scheme_table("trained W_proj (layer 0)", proj, config.d_model, config.d_ff(),
                            &model_rows)
                   .markdown();
  std::cout << "worst / (s/2) <= 1: every value within half a scale, the bound of round to "
               "nearest.\n";
  write_error_plot(random_rows, book::results_dir() + "/ch14_error_vs_bits");
  if (options.tour) {
    const auto find = [&](const std::string& name) {
      for (const SchemeError& e : random_rows)
        if (e.scheme == name) return e;
      return SchemeError{};
    };
    const SchemeError int8 = find("int8 per-channel"), int4 = find("int4 g128");
    std::cout << "tour: 14 | weight bytes vs FP16, INT8 per-channel / INT4 g128 (scales "
                 "included) | "
              << book::fixed(2 * 8 / int8.bits_per_weight, 2) << "x / "
              << book::fixed(2 * 8 / int4.bits_per_weight, 2)
              << "x | INT8 and INT4 cut weight bytes 2x and 4x\n";
  }
}

}  // namespace book::quant::stage
