#include "chapters/13_disaggregation_speculation/spec_report.h"

#include <cstdlib>
#include <fstream>
#include <iostream>

#include "chapters/01_gemm_cpu/sgemm.h"
#include "chapters/04_training_baseline/data.h"
#include "chapters/10_paged_attention/kv_shape.h"
#include "chapters/10_paged_attention/served_model.h"
#include "chapters/13_disaggregation_speculation/spec_decoder.h"
#include "chapters/13_disaggregation_speculation/speculative.h"
#include "common/check.h"
#include "common/dtype.h"
#include "common/rng.h"
#include "common/timer.h"

namespace book::spec {

std::vector<PairRow> run_trained_pair(const std::string& target_path, const std::string& draft_path,
                                      int requests, const std::vector<int>& gammas, Table& table) {
  // Tiny models: one GEMM thread, or the threads' hand-offs cost more than the arithmetic.
  const gemm::SgemmThreads one_thread(1);
  auto target = make_stack(kv::load_checkpoint_model(target_path), 256, 4, 16);
  auto draft = make_stack(kv::load_checkpoint_model(draft_path), 256, 4, 16);
  const train::Config& tc = target.model->config();
  const train::Config& dc = draft.model->config();
  const auto kv_target = kv::kv_bytes_per_token(kv::kv_shape_of(tc), DType::kF32);
  const auto kv_draft = kv::kv_bytes_per_token(kv::kv_shape_of(dc), DType::kF32);
  std::cout << "target: " << tc.n_layer << " layers, d_model " << tc.d_model << ", "
            << tc.parameter_count() << " parameters (" << tc.parameter_count() * 4
            << " bytes FP32), KV " << kv_target << " bytes/token\n"
            << "draft:  " << dc.n_layer << " layers, d_model " << dc.d_model << ", "
            << dc.parameter_count() << " parameters: +" << dc.parameter_count() * 4
            << " weight bytes (+" << fixed(100.0 * dc.parameter_count() / tc.parameter_count(), 0)
            << "%), +" << kv_draft << " KV bytes/token (+"
            << fixed(100.0 * static_cast<double>(kv_draft) / static_cast<double>(kv_target), 0)
            << "%)\n";
  const train::AdditionTask task(kv::addition_digits(tc));
  Rng rng(2026);
  std::vector<std::vector<int>> prompts;
  for (int i = 0; i < requests; ++i) {
    const auto [a, b] = task.sample(rng, train::Split::kValidation);
    auto tokens = task.encode(a, b);
    tokens.resize(task.prompt_length());
    prompts.push_back(tokens);
  }
  const int answer = task.answer_length();
  std::vector<std::vector<int>> expected;
  Timer plain_timer;
  for (int i = 0; i < requests; ++i)
    expected.push_back(plain_greedy(target.served(), prompts[i], answer, i));
  const double plain_ms = plain_timer.seconds() * 1e3;
  auto self = make_stack(self_draft(*target.model, tc.n_layer - 1), 256, 4, 16);
  std::cout << "self-draft: the target's first " << tc.n_layer - 1 << " of " << tc.n_layer
            << " layers with its head: +" << self.model->config().parameter_count() * 4
            << " weight bytes if held apart (0 if "
            << "it reads the target's own), +" << kv_target * (tc.n_layer - 1) / tc.n_layer
            << " KV bytes/token\n";
  std::vector<PairRow> rows;
  for (ModelStack* d : {&draft, &self}) {
    const std::string name = d == &draft ? "trained 1-layer" : "self (target's layer 1)";
    for (const int gamma : gammas) {
      if (gamma > tc.context - 1) continue;
      SpeculativeDecoder decoder(target.served(), d->served(), {.gamma = gamma});
      PairRow row;
      row.draft = name;
      row.gamma = gamma;
      SpecResult total;
      Timer timer;
      for (int i = 0; i < requests; ++i) {
        const SpecResult r = decoder.generate(prompts[i], answer, i);
        row.mismatches += r.tokens != expected[i];
        total.proposed += r.proposed, total.accepted += r.accepted;
        total.target_passes += r.target_passes;
        total.tokens.insert(total.tokens.end(), r.tokens.begin() + 1, r.tokens.end());
      }
      row.spec_ms = timer.seconds() * 1e3;
      row.plain_ms = plain_ms;
      row.acceptance = total.acceptance();
      row.tokens_per_pass =
          static_cast<double>(total.tokens.size()) / static_cast<double>(total.target_passes);
      rows.push_back(row);
      table.add_row({name, std::to_string(gamma), std::to_string(row.mismatches),
                     fixed(row.acceptance, 3), fixed(row.tokens_per_pass, 2), fixed(plain_ms, 1),
                     fixed(row.spec_ms, 1), fixed(plain_ms / row.spec_ms, 2)});
    }
  }
  return rows;
}

namespace {

double verify_ms(const serve::CostModel& c, int b, int rows_per_seq, int context) {
  const std::int64_t rows = static_cast<std::int64_t>(b) * rows_per_seq;
  return c.step_time(static_cast<int>(rows), static_cast<std::int64_t>(b) * context,
                     rows * context);
}

void plot(const std::string& stem, const Table& table, const std::vector<int>& gammas, double alpha,
          int context) {
  const std::string data = stem + ".dat", script = stem + ".gp", png = stem + ".png";
  {
    std::ofstream out(data);
    for (const auto& row : table.rows()) {
      for (const auto& cell : row) out << cell.substr(0, cell.find('x')) << " ";
      out << "\n";
    }
    std::ofstream gp(script);
    gp << "set terminal pngcairo size 800,480 font ',10'\nset output '" << png << "'\n"
       << "set title 'Speculative decoding, simulated clock: 7B target, 68M draft, alpha " << alpha
       << ", " << context << " cached positions'\n"
       << "set xlabel 'batch size (sequences decoding together)'\nset ylabel 'speed-up "
          "(tokens/s)'\n"
       << "set logscale x 2\nset grid\nset key top right\nset yrange [0.4:*]\n"
       << "plot 1 with lines lc rgb 'black' dt 2 title 'break-even'";
    for (std::size_t j = 0; j < gammas.size(); ++j)
      gp << ", '" << data << "' using 1:" << j + 2 << " with linespoints lw 2 title 'gamma "
         << gammas[j] << "'";
    gp << "\n";
  }
  std::cout << run_gnuplot(script, png, data) << "\n";
}

}  // namespace

Table simulated_speedups(const serve::CostModel& target, const serve::CostModel& draft,
                         const std::vector<int>& batches, const std::vector<int>& gammas,
                         double alpha, int context, std::vector<std::string>& crossings,
                         const std::string& plot_stem) {
  std::vector<std::string> columns{"batch"};
  for (const int g : gammas) columns.push_back("gamma " + std::to_string(g));
  Table table(columns);
  std::vector<int> first_loss(gammas.size(), 0);
  for (const int b : batches) {
    std::vector<std::string> cells{std::to_string(b)};
    for (std::size_t j = 0; j < gammas.size(); ++j) {
      const int g = gammas[j];
      //! [simulated_speedup]
      // Plain: one target step per token. Speculative: gamma draft steps, then one target pass
      // over gamma + 1 rows per sequence, for expected_tokens(alpha, gamma) tokens.
      const double plain = verify_ms(target, b, 1, context);
      const double round =
          g * verify_ms(draft, b, 1, context) + verify_ms(target, b, g + 1, context);
      const double speedup = expected_tokens(alpha, g) * plain / round;
      //! [simulated_speedup]
      if (speedup < 1 && first_loss[j] == 0) first_loss[j] = b;
      cells.push_back(fixed(speedup, 2) + "x");
    }
    table.add_row(cells);
  }
  for (std::size_t j = 0; j < gammas.size(); ++j)
    crossings.push_back("gamma " + std::to_string(gammas[j]) + ": " +
                        (first_loss[j]
                             ? "below 1.0x from batch " + std::to_string(first_loss[j])
                             : "above 1.0x up to batch " + std::to_string(batches.back())));
  if (!plot_stem.empty()) plot(plot_stem, table, gammas, alpha, context);
  return table;
}

Table simulated_by_length(const serve::CostModel& target, const serve::CostModel& draft,
                          const std::vector<int>& lengths, int gamma, double alpha, int prompt) {
  Table table({"output tokens", "plain ms", "speculative ms", "speed-up"});
  auto prefill = [&](const serve::CostModel& c) {
    return c.step_time(prompt, 0, static_cast<std::int64_t>(prompt) * (prompt + 1) / 2);
  };
  Rng rng(7);
  for (const int n : lengths) {
    const double plain = prefill(target) + (n - 1) * verify_ms(target, 1, 1, prompt);
    const int trials = 2000;
    double spec_total = 0;
    for (int t = 0; t < trials; ++t) {
      double ms = prefill(target) + prefill(draft);
      for (int left = n - 1; left > 0;) {
        const int g = std::min(gamma, left - 1);  // never propose past the last token
        ms += g * verify_ms(draft, 1, 1, prompt) + verify_ms(target, 1, g + 1, prompt);
        int kept = 0;
        while (kept < g && rng.uniform() < alpha) ++kept;
        left -= kept + 1;
      }
      spec_total += ms;
    }
    const double spec = spec_total / trials;
    table.add_row(
        {std::to_string(n), fixed(plain, 1), fixed(spec, 1), fixed(plain / spec, 2) + "x"});
  }
  return table;
}

}  // namespace book::spec
