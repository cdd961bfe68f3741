// calc's flags, table and one-line description.
#include "chapters/09_memory_accounting/calc_cli.h"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "common/check.h"
#include "common/flags.h"

namespace book::mem {

CalcRequest parse_calc_flags(int argc, char** argv) {
  std::string model = "llama2-7b", precision = "bf16", recompute = "none", optimizer = "adam",
              stage = "0";
  int layers = 0, d_model = 0, heads = 0, kv_heads = 0, d_ff = 0, vocab = 0;
  bool llama = false, sp = false, json = false;
  Setup s;
  double overhead_gib = 0;
  std::int64_t seq = 4096, micro_batch = 1;
  int dp = 1, tp = 1, pp = 1;
  Flags flags("calc", "training memory of one rank, by category (chapter 9's calculator)");
  std::string presets;
  for (const std::string& n : preset_names()) presets += (presets.empty() ? "" : ", ") + n;
  flags.add("model", &model, "a preset (" + presets + ") or custom");
  flags.add("layers", &layers, "transformer blocks (overrides the preset; custom: required)");
  flags.add("d-model", &d_model, "hidden size");
  flags.add("heads", &heads, "attention heads");
  flags.add("kv-heads", &kv_heads, "key/value heads (default: --heads)");
  flags.add("d-ff", &d_ff, "MLP width (default: 4 d_model)");
  flags.add("vocab", &vocab, "vocabulary size");
  flags.add("llama", &llama, "custom shape is Llama-style (RMSNorm, SwiGLU, untied, no biases)");
  flags.add("dp", &dp, "data-parallel degree");
  flags.add("zero", &stage, "ZeRO stage of the data-parallel group: 0, 1, 2 or 3");
  flags.add("tp", &tp, "tensor-parallel degree");
  flags.add("pp", &pp, "pipeline stages");
  flags.add("sequence-parallel", &sp, "Megatron's sequence parallelism (needs --tp > 1)");
  flags.add("micro-batch", &micro_batch, "sequences per micro-batch");
  flags.add("seq", &seq, "sequence length");
  flags.add("precision", &precision, "training precision").choices({"bf16", "f16", "f32"});
  flags.add("recompute", &recompute, "activation recomputation: none, selective, full");
  flags.add("optimizer", &optimizer, "adam or adam8bit");
  flags.add("overhead-gib", &overhead_gib, "CUDA context, workspaces, allocator cache (GiB)")
      .range(0, 1024);
  flags.add("json", &json, "print one JSON object of bytes instead of the table");
  flags.parse(argc, argv);

  if (model == "custom") {
    BOOK_CHECK(layers > 0 && d_model > 0 && heads > 0 && vocab > 0,
               "--model custom needs --layers, --d-model, --heads and --vocab (positive), got "
                   << layers << ", " << d_model << ", " << heads << ", " << vocab);
    s.shape.llama = llama;
  } else {
    s.shape = preset(model);
  }
  // A flag the user gave overrides the preset's value; it must be positive (an explicit 0 used to
  // leave the preset's value in place, silently).
  const auto take = [&flags](int given, int& field, const char* flag) {
    if (!flags.was_set(flag + 2)) return;
    BOOK_CHECK(given > 0, flag << " must be positive, got " << given);
    field = given;
  };
  take(layers, s.shape.n_layer, "--layers");
  take(d_model, s.shape.d_model, "--d-model");
  take(heads, s.shape.n_head, "--heads");
  take(vocab, s.shape.vocab_size, "--vocab");
  if (model == "custom") {
    s.shape.n_kv_head = s.shape.n_head;
    s.shape.d_ff = 4 * s.shape.d_model;
  }
  take(kv_heads, s.shape.n_kv_head, "--kv-heads");
  take(d_ff, s.shape.d_ff, "--d-ff");
  s.parallel.dp = dp, s.parallel.tp = tp, s.parallel.pp = pp;
  BOOK_CHECK(stage == "0" || stage == "1" || stage == "2" || stage == "3",
             "--zero must be 0, 1, 2 or 3, got '" << stage << "'");
  s.parallel.stage = zero::parse_stage(stage);
  s.parallel.sequence_parallel = sp;
  s.seq = seq, s.micro_batch = micro_batch;
  s.precision = parse_dtype(precision);
  s.recompute = parse_recompute(recompute);
  s.optimizer = parse_optimizer(optimizer);
  s.overhead_bytes = static_cast<std::uint64_t>(std::llround(overhead_gib * (1u << 30)));
  validate(s);
  return {s, json};
}

Table breakdown_table(const Breakdown& b) {
  Table t({"category", "GiB", "bytes", "bytes per parameter"});
  const auto row = [&](const char* name, std::uint64_t bytes) {
    t.add_row({name, fixed(static_cast<double>(bytes) / (1u << 30), 2), std::to_string(bytes),
               fixed(static_cast<double>(bytes) / static_cast<double>(b.rank_parameters), 2)});
  };
  row("parameters", b.parameters);
  row("gradients", b.gradients);
  row("optimizer_states (master + m + v)", b.optimizer_states());
  row("activations", b.activations);
  row("communication", b.communication);
  row("overhead", b.overhead);
  row("total", b.total());
  return t;
}

std::string describe(const Setup& s) {
  char psi[32];
  std::snprintf(psi, sizeof psi, "%.3g", static_cast<double>(parameters_of(s.shape).total));
  std::ostringstream out;
  out << s.shape.name << " (" << psi << " parameters): dp " << s.parallel.dp << " "
      << zero::stage_name(s.parallel.stage) << ", tp " << s.parallel.tp
      << (s.parallel.sequence_parallel ? " +SP" : "") << ", pp " << s.parallel.pp
      << ", micro-batch " << s.micro_batch << " x seq " << s.seq << ", " << dtype_name(s.precision)
      << ", recompute " << recomputation_name(s.recompute) << ", " << optimizer_name(s.optimizer);
  return out.str();
}

}  // namespace book::mem
