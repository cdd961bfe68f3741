#include "chapters/07_tensor_parallel/bandwidth_model.h"

#include "common/check.h"

namespace book::tp {

double tensor_parallel_bytes_per_layer(const TransformerShape& shape, int t) {
  BOOK_CHECK(t >= 1, "tensor_parallel_bytes_per_layer: t must be >= 1, got " << t);
  const double s = shape.sequence * shape.micro_batch * shape.hidden * shape.bytes_per_element;
  return 4 * 2.0 * (t - 1) / t * s;
}

double pipeline_bytes_per_boundary(const TransformerShape& shape) {
  return 2 * shape.sequence * shape.micro_batch * shape.hidden * shape.bytes_per_element;
}

double layer_flops(const TransformerShape& shape) {
  const double b = shape.micro_batch, s = shape.sequence, h = shape.hidden;
  return 72 * b * s * h * h * (1 + s / (6 * h));
}

std::vector<BandwidthRow> bandwidth_model(const TransformerShape& shape, const Hardware& hardware,
                                          const std::vector<int>& degrees, int stages) {
  BOOK_CHECK(stages >= 2, "bandwidth_model: a pipeline needs at least 2 stages, got " << stages);
  std::vector<BandwidthRow> rows;
  const double per_layer = layer_flops(shape) / hardware.peak.value;
  for (int t : degrees) {
    const double bytes = tensor_parallel_bytes_per_layer(shape, t);
    rows.push_back({"TP t=" + std::to_string(t) + ", per layer", bytes,
                    bytes / hardware.nvlink.value, bytes / hardware.network.value, per_layer / t});
  }
  const double bytes = pipeline_bytes_per_boundary(shape);
  rows.push_back({"PP " + std::to_string(stages) + " stages, per boundary and micro-batch", bytes,
                  bytes / hardware.nvlink.value, bytes / hardware.network.value,
                  per_layer * shape.layers / stages});
  return rows;
}

}  // namespace book::tp
