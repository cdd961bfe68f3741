#include "chapters/07_tensor_parallel/accounting.h"

#include "chapters/03_collectives/types.h"
#include "common/check.h"

namespace book::tp {

std::size_t parameter_elements(const train::Config& config, const train::ModelPart& part) {
  const train::ModelPart p = part.resolved(config);
  const std::size_t t = p.tensor_parallel.size, c = config.d_model, v = config.vocab_size;
  BOOK_CHECK(v % t == 0,
             "parameter_elements: " << t << " ranks cannot split a vocabulary of " << v);
  const std::size_t layers = static_cast<std::size_t>(p.last_layer - p.first_layer);
  std::size_t total = layers * ((12 * c * c + 7 * c) / t + 6 * c);
  if (p.has_embedding()) total += v * c / t + static_cast<std::size_t>(config.context) * c;
  if (p.has_head(config)) total += 2 * c + (p.has_embedding() ? 0 : v * c / t);
  return total;
}

std::size_t layer_activation_bytes(const train::Config& config, int batch, int seq_len, int t,
                                   SequenceParallel sequence_parallel, std::size_t element_size) {
  // t = 0 divided by zero and a negative t wrapped to a huge size_t; a t that does not divide
  // the heads (or, with sequence parallelism, the tokens) was silently rounded down.
  BOOK_CHECK(batch >= 1 && seq_len >= 1, "layer_activation_bytes: batch "
                                             << batch << " and seq_len " << seq_len
                                             << " must be >= 1");
  BOOK_CHECK(t >= 1 && config.n_head % t == 0,
             "layer_activation_bytes: t = " << t << " must be >= 1 and divide the " << config.n_head
                                            << " heads; use a tensor-parallel size that does");
  BOOK_CHECK(sequence_parallel == SequenceParallel::kOff ||
                 (static_cast<std::int64_t>(batch) * seq_len) % t == 0,
             "layer_activation_bytes: with sequence parallelism t = "
                 << t << " must divide the " << static_cast<std::int64_t>(batch) * seq_len
                 << " tokens (batch " << batch << " x seq_len " << seq_len << ")");
  const std::size_t n = static_cast<std::size_t>(batch) * seq_len, c = config.d_model;
  const std::size_t held = sequence_parallel == SequenceParallel::kOn ? n / t : n;
  const std::size_t probabilities = static_cast<std::size_t>(batch) * (config.n_head / t) *
                                    static_cast<std::size_t>(seq_len) * seq_len;
  return element_size * (held * (4 * c + 4) + n * 12 * c / t + probabilities);
}

//! [megatron_formula]
double megatron_layer_activation_bytes(double s, double b, double h, double a, int t,
                                       SequenceParallel sequence_parallel) {
  const double sbh = s * b * h, attention = 5 * a * s / h;
  if (sequence_parallel == SequenceParallel::kOn) return sbh / t * (34 + attention);
  return sbh * (10 + 24.0 / t + attention / t);  // t = 1: sbh(34 + 5as/h)
}
//! [megatron_formula]

double megatron_without_dropout_elements(double s, double b, double h, double a, int t,
                                         SequenceParallel sequence_parallel) {
  const double sbh = s * b * h, probabilities = a * s * s * b / t;
  if (sequence_parallel == SequenceParallel::kOn) return sbh * 16 / t + probabilities;
  return sbh * (4 + 12.0 / t) + probabilities;
}

const char* collective_name(Collective kind) {
  switch (kind) {
    case Collective::kAllReduce:
      return "all-reduce";
    case Collective::kReduceScatter:
      return "reduce-scatter";
    case Collective::kAllGather:
      return "all-gather";
  }
  return "?";
}

//! [layer_collectives]
std::vector<CollectiveCall> layer_forward_collectives(std::uint64_t tokens, int channels,
                                                      SequenceParallel sequence_parallel) {
  const std::uint64_t nc = tokens * static_cast<std::uint64_t>(channels);
  using enum Collective;
  if (sequence_parallel == SequenceParallel::kOff)
    return {{kAllReduce, nc, "attention out (g)"}, {kAllReduce, nc, "MLP down (g)"}};
  return {{kAllGather, nc, "LN1 -> QKV (gather)"},
          {kReduceScatter, nc, "attention out (scatter)"},
          {kAllGather, nc, "LN2 -> MLP up (gather)"},
          {kReduceScatter, nc, "MLP down (scatter)"}};
}

std::vector<CollectiveCall> layer_backward_collectives(std::uint64_t tokens, int channels,
                                                       SequenceParallel sequence_parallel) {
  const std::uint64_t nc = tokens * static_cast<std::uint64_t>(channels);
  using enum Collective;
  if (sequence_parallel == SequenceParallel::kOff)
    return {{kAllReduce, nc, "MLP up dx (f)"}, {kAllReduce, nc, "QKV dx (f)"}};
  return {{kAllGather, nc, "MLP down dy (scatter's conjugate)"},
          {kAllGather, nc, "LN2 output again, for dW_fc"},
          {kReduceScatter, nc, "MLP up dx (gather's conjugate)"},
          {kAllGather, nc, "attention out dy (scatter's conjugate)"},
          {kAllGather, nc, "LN1 output again, for dW_qkv"},
          {kReduceScatter, nc, "QKV dx (gather's conjugate)"}};
}
//! [layer_collectives]

std::vector<CollectiveCall> step_collectives(const train::Config& config, int batch, int seq_len,
                                             int t, SequenceParallel sequence_parallel) {
  const std::uint64_t n = static_cast<std::uint64_t>(batch) * seq_len;
  const std::uint64_t nc = n * static_cast<std::uint64_t>(config.d_model);
  const bool on = sequence_parallel == SequenceParallel::kOn;
  using enum Collective;
  std::vector<CollectiveCall> calls;
  auto append = [&](const std::vector<CollectiveCall>& more) {
    calls.insert(calls.end(), more.begin(), more.end());
  };
  calls.push_back({on ? kReduceScatter : kAllReduce, nc, "embedding (vocabulary-parallel)"});
  for (int l = 0; l < config.n_layer; ++l)
    append(layer_forward_collectives(n, config.d_model, sequence_parallel));
  if (on) calls.push_back({kAllGather, nc, "LN_f -> head (gather)"});
  calls.push_back({kAllGather, n * static_cast<std::uint64_t>(t), "cross-entropy row maxima"});
  calls.push_back({kAllReduce, 2 * n, "cross-entropy sums and target logits"});
  if (on) {
    calls.push_back({kAllGather, nc, "LN_f output again, for dwte"});
    calls.push_back({kReduceScatter, nc, "head dx (gather's conjugate)"});
  } else {
    calls.push_back({kAllReduce, nc, "head dx (f)"});
  }
  for (int l = 0; l < config.n_layer; ++l)
    append(layer_backward_collectives(n, config.d_model, sequence_parallel));
  if (on) {
    calls.push_back({kAllGather, nc, "embedding dy (scatter's conjugate)"});
    const std::uint64_t sharded =
        (6 * static_cast<std::uint64_t>(config.n_layer) + 2) * config.d_model;
    calls.push_back({kAllReduce, sharded, "LayerNorm and bias gradients (finish_gradients)"});
  }
  return calls;
}

CollectiveCounts count(const std::vector<CollectiveCall>& calls) {
  CollectiveCounts counts;
  for (const auto& call : calls) switch (call.kind) {
      case Collective::kAllReduce:
        ++counts.all_reduces;
        counts.all_reduce_elements += call.elements;
        break;
      case Collective::kReduceScatter:
        ++counts.reduce_scatters;
        counts.reduce_scatter_elements += call.elements;
        break;
      case Collective::kAllGather:
        ++counts.all_gathers;
        counts.all_gather_elements += call.elements;
        break;
    }
  return counts;
}

std::uint64_t ring_elements_sent(const std::vector<CollectiveCall>& calls, int t, int rank) {
  BOOK_CHECK(t >= 1 && rank >= 0 && rank < t, "ring_elements_sent: rank " << rank << " of " << t);
  if (t == 1) return 0;
  std::uint64_t sent = 0;
  for (const auto& call : calls) {
    const std::uint64_t mine = coll::shard_of(call.elements, t, rank).count;
    const std::uint64_t next = coll::shard_of(call.elements, t, (rank + 1) % t).count;
    switch (call.kind) {
      case Collective::kAllReduce:
        sent += 2 * call.elements - mine - next;
        break;
      case Collective::kReduceScatter:
        sent += call.elements - mine;
        break;
      case Collective::kAllGather:
        sent += call.elements - next;
        break;
    }
  }
  return sent;
}

}  // namespace book::tp
