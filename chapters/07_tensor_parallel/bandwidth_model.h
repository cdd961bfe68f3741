/// @file
/// Why tensor parallelism stays inside an NVLink node and pipeline parallelism crosses nodes, as
/// arithmetic: the bytes each GPU must move per transformer layer under tensor parallelism (four
/// all-reduces of s·b·h elements, on the critical path), against the bytes a pipeline stage
/// boundary moves per micro-batch (one activation forward, one gradient backward, however many
/// layers the stage holds), each divided by a link's bandwidth and compared with the layer's
/// compute time. The hardware figures are vendors' datasheet numbers, named with their sources;
/// nothing here is measured (this machine has no GPU); the traffic formulas are the ones this
/// chapter's tests count exactly on threads.
#pragma once

#include <string>
#include <vector>

namespace book::tp {

/// A transformer's shape for the model: GPT-3 175B by default (Brown et al. 2020, Table 2.1:
/// 96 layers, d_model 12288, 96 heads, context 2048), one sequence per micro-batch, BF16.
struct TransformerShape {
  std::string name = "GPT-3 175B";  ///< for the table
  double hidden = 12288;            ///< h
  double heads = 96;                ///< a
  double layers = 96;               ///< L
  double sequence = 2048;           ///< s
  double micro_batch = 1;           ///< b
  double bytes_per_element = 2;     ///< BF16 activations
};

/// One link or chip figure, with where it comes from.
struct HardwareFigure {
  double value = 0;    ///< bytes/s or FLOP/s
  std::string what;    ///< e.g. "NVLink 4, per direction"
  std::string source;  ///< the datasheet it comes from
};

/// The figures the model uses: an H100/H200 SXM's NVLink, one 400 Gb/s NDR InfiniBand port per
/// GPU (a DGX H100's compute fabric), and the GPU's dense BF16 peak.
struct Hardware {
  /// 450 GB/s each way: NVIDIA's H100 and H200 SXM datasheets give 900 GB/s of NVLink bandwidth,
  /// counting both directions.
  HardwareFigure nvlink{450e9, "NVLink 4 (H100/H200 SXM), per direction",
                        "NVIDIA H100 and H200 Tensor Core GPU datasheets: 900 GB/s NVLink, "
                        "both directions"};
  /// 50 GB/s each way: one ConnectX-7 NDR port, 400 Gb/s, per GPU.
  HardwareFigure network{50e9, "InfiniBand NDR, one 400 Gb/s port per GPU, per direction",
                         "NVIDIA DGX BasePOD reference architecture (DGX H100/H200): eight "
                         "single-port ConnectX-7 at up to 400 Gb/s for the compute fabric, one "
                         "per GPU"};
  /// 989 TFLOP/s: dense BF16 on the tensor cores (1979 with 2:4 sparsity).
  HardwareFigure peak{989e12, "dense BF16 tensor-core peak (H100 SXM)",
                      "NVIDIA H100 Tensor Core GPU datasheet: 1979 TFLOPS BF16 with sparsity, "
                      "989 dense"};
};

/// Every function below requires each figure of the TransformerShape (and bandwidth_model each
/// of the Hardware's) to be positive and finite, and throws book::Error naming the first that is
/// not: a zero would give infinite seconds, a NaN a NaN answer.

/// Bytes one GPU sends per layer (forward and backward) under t-way tensor parallelism with the
/// ring: four all-reduces of S = s·b·h·bytes, each 2(t−1)/t·S. (Sequence parallelism's
/// reduce-scatters and all-gathers move the same; its two re-gathers add 2·(t−1)/t·S.)
double tensor_parallel_bytes_per_layer(const TransformerShape& shape, int t);

/// Bytes one pipeline stage boundary carries per micro-batch: the activation s·b·h forward and
/// its gradient backward, 2·s·b·h·bytes — independent of the layers each stage holds.
double pipeline_bytes_per_boundary(const TransformerShape& shape);

/// FLOPs of one layer's forward and backward pass for one micro-batch, without recomputation:
/// 72·b·s·h²·(1 + s/(6h)) (Narayanan et al., "Efficient Large-Scale Language Model Training on
/// GPU Clusters Using Megatron-LM", SC21, §5.1: forward 24bsh²(1 + s/6h), backward twice that).
double layer_flops(const TransformerShape& shape);

/// One row of the model: tensor-parallel degree t (or a pipeline boundary, t = 0).
struct BandwidthRow {
  std::string what;            ///< "TP t=8 per layer" or "PP boundary per micro-batch"
  double bytes = 0;            ///< bytes one GPU sends
  double nvlink_seconds = 0;   ///< bytes / NVLink
  double network_seconds = 0;  ///< bytes / network
  double compute_seconds = 0;  ///< the compute the traffic must keep up with, at peak
};

/// Rows for t in `degrees` (per layer: the layer's compute divided by t) and one for a pipeline
/// boundary between `stages` stages (per micro-batch: the compute of one stage, L/stages layers).
std::vector<BandwidthRow> bandwidth_model(const TransformerShape& shape, const Hardware& hardware,
                                          const std::vector<int>& degrees, int stages);

}  // namespace book::tp
