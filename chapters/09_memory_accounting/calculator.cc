// The memory calculator: model states, activations, buffers and overhead of the largest rank.
#include "chapters/09_memory_accounting/calculator.h"

#include <sstream>

#include "chapters/09_memory_accounting/dp_states.h"
#include "common/enum_check.h"
#include "common/check.h"

namespace book::mem {

Recomputation parse_recompute(std::string_view text) {
  for (Recomputation r : {Recomputation::kNone, Recomputation::kSelective, Recomputation::kFull})
    if (text == recomputation_name(r)) return r;
  BOOK_CHECK(false, "--recompute: unknown policy '" << text << "' (valid: none, selective, full)");
  return Recomputation::kNone;
}

const char* optimizer_name(Optimizer o) { return o == Optimizer::kAdam ? "adam" : "adam8bit"; }

Optimizer parse_optimizer(std::string_view text) {
  if (text == "adam") return Optimizer::kAdam;
  if (text == "adam8bit") return Optimizer::kAdam8bit;
  BOOK_CHECK(false, "--optimizer: unknown optimizer '" << text << "' (valid: adam, adam8bit)");
  return Optimizer::kAdam;
}

std::uint64_t Breakdown::total() const {
  return parameters + gradients + master_weights + optimizer_moments + activations + communication +
         overhead;
}

void validate(const Setup& s) {
  // Stage(4), Recomputation(3) and Optimizer(2) used to be priced.
  check_enum(s.parallel.stage, zero::Stage::kDdp, zero::Stage::kZero3, "zero::Stage", "calculate");
  check_enum(s.recompute, Recomputation::kNone, Recomputation::kFull, "mem::Recomputation",
             "calculate");
  check_enum(s.optimizer, Optimizer::kAdam, Optimizer::kAdam8bit, "mem::Optimizer", "calculate");
  validate(s.shape);
  const Parallelism& p = s.parallel;
  const auto degree = [](const char* flag, std::int64_t value) {
    BOOK_CHECK(value >= 1 && value <= (1 << 20), flag << " must be in [1, 2^20], got " << value);
  };
  degree("--dp", p.dp);
  degree("--tp", p.tp);
  degree("--pp", p.pp);
  degree("--micro-batch", s.micro_batch);
  BOOK_CHECK(s.seq >= 1 && s.seq <= (1 << 24), "--seq must be in [1, 2^24], got " << s.seq);
  BOOK_CHECK(
      s.shape.n_head % p.tp == 0 && s.shape.n_kv_head % p.tp == 0 && s.shape.d_model % p.tp == 0,
      "--tp " << p.tp << " does not divide the " << s.shape.n_head << " heads ("
              << s.shape.n_kv_head << " key/value heads, d_model " << s.shape.d_model << ") of "
              << s.shape.name << "; pick a common divisor");
  BOOK_CHECK(s.shape.n_layer % p.pp == 0, "--pp " << p.pp << " does not divide the "
                                                  << s.shape.n_layer << " layers of "
                                                  << s.shape.name << "; pick a divisor");
  BOOK_CHECK(!p.sequence_parallel || p.tp > 1,
             "--sequence-parallel needs --tp > 1 (it shards over the tensor-parallel group)");
  // Absurd sizes: refuse before any product can overflow 64 bits (2^58 bytes is 256 PiB).
  const long double limit = 0x1p58L;
  const ParameterBreakdown params = parameters_of(s.shape);
  BOOK_CHECK(16.0L * params.total <= limit,
             "--layers/--d-model/--d-ff/--vocab: " << params.total
                                                   << " parameters is beyond any machine; the "
                                                      "calculator prices up to 2^54 parameters");
  const long double sb = static_cast<long double>(s.seq) * s.micro_batch;
  const long double per_layer =
      sb * s.shape.d_model * 34 + 5.0L * s.shape.n_head * s.seq * sb + 4 * sb * s.shape.vocab_size;
  BOOK_CHECK(per_layer * s.shape.n_layer <= limit,
             "--seq " << s.seq << " x --micro-batch " << s.micro_batch
                      << ": the activations would exceed 2^58 bytes; use a shorter sequence or a "
                         "smaller micro-batch");
  // Not flags (overhead is --overhead-gib, at most 1024): bounded so that total() cannot wrap.
  BOOK_CHECK(s.bucket_bytes <= (std::uint64_t{1} << 40),
             "Setup: bucket_bytes must be at most 2^40 (1 TiB), got "
                 << s.bucket_bytes << " (PyTorch's default is 25 MiB)");
  BOOK_CHECK(s.overhead_bytes <= limit, "Setup: overhead_bytes must be at most 2^58, got "
                                            << s.overhead_bytes << " (--overhead-gib is in GiB)");
  BOOK_CHECK(s.precision != DType::kF64,
             "--precision f64 is not a training precision; use bf16, f16 or f32");
}

Breakdown calculate(const Setup& s) {
  validate(s);
  const Parallelism& p = s.parallel;
  const ModelShape& m = s.shape;
  Breakdown b;
  b.rank_parameters = rank_parameters(m, p);
  const zero::ModelStateBytes states = zero_model_states(m, p, s.precision);
  b.parameters = states.parameters;
  b.gradients = states.gradients;
  b.master_weights = states.master_weights;
  b.optimizer_moments = states.optimizer_states;
  if (s.optimizer == Optimizer::kAdam8bit) {
    // The same elements (8 bytes each as FP32 m and v), one byte per moment plus the scales.
    const std::uint64_t elements = states.optimizer_states / 8;
    const std::uint64_t blocks = (elements + kAdam8bitBlock - 1) / kAdam8bitBlock;
    b.optimizer_moments = 2 * elements + 2 * blocks * 4;
  }

  const std::uint64_t sbh = static_cast<std::uint64_t>(s.seq) * s.micro_batch * m.d_model;
  LayerActivationInputs in;
  in.seq = s.seq;
  in.micro_batch = s.micro_batch;
  in.hidden = m.d_model;
  in.heads = m.n_head;
  in.tensor_parallel = p.tp;
  in.sequence_parallel = p.sequence_parallel;
  in.recompute = s.recompute;
  // 1F1B: the first stage holds pp micro-batches of its n_layer/pp layers, n_layer layers' worth.
  b.activations = activation_bytes_per_layer(in) * static_cast<std::uint64_t>(m.n_layer);
  b.activations += sbh * p.pp / p.tp;  // the embedding's dropout mask, pp micro-batches
  if (p.pp == 1)
    b.activations += 4 * static_cast<std::uint64_t>(s.seq) * s.micro_batch *
                     (static_cast<std::uint64_t>(m.d_model) + m.vocab_size) / p.tp;

  const std::uint64_t wire = dtype_size(s.precision);
  if (p.dp > 1) b.communication += 2 * (s.bucket_bytes / 4) * wire;
  if (p.dp > 1 && p.stage == zero::Stage::kZero3) {
    // A tensor-parallel rank gathers its own slice of a layer, as rank_parameters splits it:
    // ⌈matrices/tp⌉ and the norms (replicated), not the whole layer.
    const ParameterBreakdown pb = parameters_of(m);
    const std::int64_t gathered = (pb.layer_matrices + p.tp - 1) / p.tp + pb.layer_norms;
    b.communication += 2 * static_cast<std::uint64_t>(gathered) * wire;
  }
  if (p.pp > 1) b.communication += 2 * (p.sequence_parallel ? sbh / p.tp : sbh) * 2;
  b.overhead = s.overhead_bytes;
  return b;
}

std::string to_json(const Breakdown& b) {
  std::ostringstream out;
  out << "{\"parameters\": " << b.parameters << ", \"gradients\": " << b.gradients
      << ", \"optimizer_states\": " << b.optimizer_states()
      << ", \"activations\": " << b.activations << ", \"communication\": " << b.communication
      << ", \"overhead\": " << b.overhead << ", \"total\": " << b.total() << "}";
  return out.str();
}

double model_flops_per_token(double n) { return 6 * n; }

double hardware_flops_per_token(double n, Recomputation recompute) {
  return recompute == Recomputation::kFull ? 8 * n : 6 * n;
}

}  // namespace book::mem
