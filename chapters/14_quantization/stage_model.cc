// The stage's sections "Outliers", "SmoothQuant" and "AWQ": chapter 4's trained model with every
// scheme and fix (model_report.h), and SmoothQuant's α on one layer with outliers of its own
// (layer_sweep.h), with the picture of its error curve.
#include <fstream>
#include <iostream>

#include "chapters/14_quantization/layer_sweep.h"
#include "chapters/14_quantization/model_report.h"
#include "chapters/14_quantization/stage.h"
#include "common/table.h"

namespace book::quant::stage {
namespace {

const SchemeRow& row_named(const ModelQuantReport& report, const std::string& prefix,
                           bool outliers) {
  for (const SchemeRow& r : report.rows)
    if (r.outliers == outliers && r.scheme.rfind(prefix, 0) == 0) return r;
  return report.rows.front();
}

void write_alpha_plot(const LayerSweep& sweep, const LayerSweepOptions& o, const std::string& stem) {
  const std::string data = stem + ".dat", script = stem + ".gp", png = stem + ".png";
  {
    std::ofstream out(data);
    for (const LayerSweepPoint& p : sweep.points)
      out << p.alpha << " " << p.error << " " << p.activation_range << " " << p.weight_range
          << "\n";
    std::ofstream gp(script);
    gp << "set terminal pngcairo size 800,500 font ',10'\nset output '" << png << "'\n"
       << "set title 'SmoothQuant on one " << o.in << " x " << o.out << " layer, " << o.outlier_channels
       << " activation channels x" << o.outlier_scale << ": W8A8 (per-tensor X, per-channel W)'\n"
       << "set xlabel 'migration strength alpha'\nset ylabel 'relative output error'\n"
       << "set y2label 'max / RMS (the grid a typical value uses)'\nset y2tics\nset ytics nomirror\n"
       << "set grid\nset key top center\n"
       << "plot '" << data << "' using 1:2 with linespoints lw 2 pt 7 lc rgb '#e41a1c' "
       << "title 'output error', \\\n"
       << "     " << sweep.error_unsmoothed << " with lines dt 2 lc rgb '#e41a1c' "
       << "title 'no smoothing', \\\n"
       << "     " << sweep.error_weight_only << " with lines dt 3 lc rgb 'black' "
       << "title 'INT8 weights only (the floor)', \\\n"
       << "     '" << data << "' using 1:3 axes x1y2 with lines lw 1 lc rgb '#377eb8' "
       << "title 'activations: max/RMS', \\\n"
       << "     '" << data << "' using 1:4 axes x1y2 with lines lw 1 lc rgb '#4daf4a' "
       << "title 'weights: max/RMS per channel'\n";
  }
  std::cout << run_gnuplot(script, png, data) << "\n";
}

void layer_sweep_section(const StageOptions& options) {
  std::cout << "\n## SmoothQuant's alpha on one layer with activation outliers\n\n";
  LayerSweepOptions o;
  if (options.tour) {
    o.tokens = 64;
    o.in = o.out = 256;
    o.steps = 10;
  }
  const LayerSweep sweep = layer_alpha_sweep(o);
  Table table({"alpha", "relative output error", "vs no smoothing", "activations max/RMS",
               "weights max/RMS"});
  for (const LayerSweepPoint& p : sweep.points)
    table.add_row({fixed(p.alpha, 2), fixed(p.error, 4),
                   fixed(p.error / sweep.error_unsmoothed, 2) + "x", fixed(p.activation_range, 1),
                   fixed(p.weight_range, 1)});
  std::cout << o.tokens << " tokens x " << o.in << " inputs -> " << o.out << " outputs, "
            << o.outlier_channels << " input channels scaled x" << o.outlier_scale
            << "; W8A8: one scale for X, one per output channel of W\n"
            << table.markdown() << "no smoothing: " << fixed(sweep.error_unsmoothed, 4)
            << "; INT8 weights with FP32 activations (the floor): "
            << fixed(sweep.error_weight_only, 4) << "; best alpha " << fixed(sweep.best_alpha(), 2)
            << "\n";
  table.write_csv(results_dir() + "/ch14_alpha_layer.csv");
  write_alpha_plot(sweep, o, results_dir() + "/ch14_alpha");
  if (options.tour) {
    double best = sweep.points.front().error;
    for (const LayerSweepPoint& p : sweep.points) best = std::min(best, p.error);
    std::cout << "tour: 14 | SmoothQuant on a layer with x" << o.outlier_scale
              << " activation outliers, W8A8 error: none vs best alpha (" << fixed(sweep.best_alpha(), 1)
              << ") | " << fixed(sweep.error_unsmoothed, 3) << " vs " << fixed(best, 3)
              << " | migrating scale to the weights (alpha ~ 0.5) fixes per-tensor INT8 "
                 "activations\n";
  }
}

}  // namespace

void model_section(const StageOptions& options) {
  std::cout << "\n## Outliers and their fixes, on chapter 4's trained model\n\n";
  const auto model = trained_model(options);
  ModelQuantOptions o;
  if (options.tour) {
    o.held_out = 100;
    o.calibration = 32;
    o.alpha_steps = 5;
  }
  const ModelQuantReport report = run_model_quant(*model, o, options.threads);
  const Table table = report.table();
  std::cout << o.held_out << " held-out sums, " << o.calibration
            << " calibration sequences; outliers: " << o.outlier_channels
            << " channels of each LayerNorm x" << o.outlier_min << "..x" << o.outlier_max
            << " (an exact reparametrisation: the FP32 model is unchanged)\n"
            << table.markdown();
  table.write_csv(results_dir() + "/ch14_model.csv");
  report.sweep_table().write_csv(results_dir() + "/ch14_alpha_model.csv");
  std::cout << "SmoothQuant's best alpha on this model (smallest KL), outliers on: per-tensor "
            << fixed(report.best_alpha(ActivationQuant::kPerTensor, true), 1) << ", per-token "
            << fixed(report.best_alpha(ActivationQuant::kPerToken, true), 1)
            << " (the sweep is flat here: results/ch14_alpha_model.csv; the layer below shows the "
               "curve)\n";
  if (options.tour) {
    const SchemeRow& naive = row_named(report, "W8A8 per-tensor", true);
    const SchemeRow& smooth = row_named(report, "W8A8 per-tensor + SmoothQuant", true);
    std::cout << "tour: 14 | exact-sum accuracy with outliers, W8A8 per-tensor vs + SmoothQuant | "
              << fixed(100 * naive.quality.accuracy(), 0) << "% vs "
              << fixed(100 * smooth.quality.accuracy(), 0)
              << "% | outliers break naive W8A8; SmoothQuant restores it\n";
  }
  layer_sweep_section(options);
}

}  // namespace book::quant::stage
