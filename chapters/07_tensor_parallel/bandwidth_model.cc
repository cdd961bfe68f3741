#include "chapters/07_tensor_parallel/bandwidth_model.h"

#include <cmath>

#include "common/check.h"

namespace book::tp {
namespace {

// A zero or NaN figure would not stop the formulas: they would answer 0, inf or NaN seconds.
void check_positive(const char* caller, const char* name, double value) {
  BOOK_CHECK(std::isfinite(value) && value > 0,
             caller << ": " << name << " must be positive and finite, got " << value);
}

void check_shape(const char* caller, const TransformerShape& shape) {
  check_positive(caller, "shape.hidden", shape.hidden);
  check_positive(caller, "shape.heads", shape.heads);
  check_positive(caller, "shape.layers", shape.layers);
  check_positive(caller, "shape.sequence", shape.sequence);
  check_positive(caller, "shape.micro_batch", shape.micro_batch);
  check_positive(caller, "shape.bytes_per_element", shape.bytes_per_element);
}

}  // namespace

double tensor_parallel_bytes_per_layer(const TransformerShape& shape, int t) {
  BOOK_CHECK(t >= 1, "tensor_parallel_bytes_per_layer: t must be >= 1, got " << t);
  check_shape("tensor_parallel_bytes_per_layer", shape);
  const double s = shape.sequence * shape.micro_batch * shape.hidden * shape.bytes_per_element;
  return 4 * 2.0 * (t - 1) / t * s;
}

double pipeline_bytes_per_boundary(const TransformerShape& shape) {
  check_shape("pipeline_bytes_per_boundary", shape);
  return 2 * shape.sequence * shape.micro_batch * shape.hidden * shape.bytes_per_element;
}

double layer_flops(const TransformerShape& shape) {
  check_shape("layer_flops", shape);
  const double b = shape.micro_batch, s = shape.sequence, h = shape.hidden;
  return 72 * b * s * h * h * (1 + s / (6 * h));
}

std::vector<BandwidthRow> bandwidth_model(const TransformerShape& shape, const Hardware& hardware,
                                          const std::vector<int>& degrees, int stages) {
  BOOK_CHECK(stages >= 2, "bandwidth_model: a pipeline needs at least 2 stages, got " << stages);
  check_shape("bandwidth_model", shape);
  check_positive("bandwidth_model", "hardware.nvlink", hardware.nvlink.value);
  check_positive("bandwidth_model", "hardware.network", hardware.network.value);
  check_positive("bandwidth_model", "hardware.peak", hardware.peak.value);
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
