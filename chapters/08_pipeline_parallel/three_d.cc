// DP × TP × PP: the grid, the tensor-parallel stages and the step.
#include "chapters/08_pipeline_parallel/three_d.h"

#include <cstdint>

#include "chapters/03_collectives/agreement.h"
#include "chapters/04_training_baseline/checkpoint.h"
#include "chapters/08_pipeline_parallel/partition.h"
#include "common/check.h"

namespace book::pp {
namespace {

// Validates before the grid is built (used in Rank3D's initialiser list): the degrees fit, and
// every rank passed the same ones, model and pipeline shape (ranks with other degrees would
// split other groups and wait for each other until the timeout).
coll::Communicator& checked(coll::Communicator& world, const train::Config& config,
                            const coll::GridDegrees& degrees, const Shape& shape) {
  check_3d(config, degrees, world.size(), shape);
  const std::int64_t fields[] = {degrees.dp,   degrees.tp,      degrees.pp,       degrees.ep,
                                 config.vocab_size, config.context, config.n_layer, config.n_head,
                                 config.d_model, shape.stages,   shape.micro_batches, shape.chunks};
  const std::uint64_t fingerprint = train::fnv1a64(
      {reinterpret_cast<const std::uint8_t*>(fields), sizeof fields});
  coll::require_same_on_every_rank(world, fingerprint, "Rank3D",
                                   "degrees, model or pipeline shape",
                                   "start every rank with the same dp, tp, pp, model and schedule");
  return world;
}

}  // namespace

//! [check_3d]
void check_3d(const train::Config& config, const coll::GridDegrees& degrees, int world_size,
              const Shape& shape) {
  check_shape(shape, "check_3d");
  BOOK_CHECK(degrees.dp >= 1 && degrees.tp >= 1 && degrees.pp >= 1,
             "check_3d: degrees must be at least 1, got dp = "
                 << degrees.dp << ", tp = " << degrees.tp << ", pp = " << degrees.pp);
  BOOK_CHECK(world_size >= 1, "check_3d: the world must have at least 1 rank, got " << world_size);
  // In 64 bits: an int product of three degrees near 2^16 wraps (65536² × 1 was 0).
  const std::int64_t product = std::int64_t{degrees.dp} * degrees.tp * degrees.pp;
  BOOK_CHECK(product == world_size,
             "check_3d: dp × tp × pp = " << degrees.dp << " × " << degrees.tp << " × " << degrees.pp
                                         << " = " << product << " is not the " << world_size
                                         << " ranks; choose degrees whose product "
                                         << "is the number of ranks");
  BOOK_CHECK(config.n_head % degrees.tp == 0, "check_3d: tensor-parallel degree "
                                                  << degrees.tp << " does not divide the "
                                                  << config.n_head
                                                  << " heads; choose tp among the divisors of "
                                                  << "n_head");
  BOOK_CHECK(config.vocab_size % degrees.tp == 0,
             "check_3d: tensor-parallel degree "
                 << degrees.tp << " does not divide the vocabulary of " << config.vocab_size
                 << " tokens (each TP rank holds its rows of the embedding and the LM head); pad "
                    "the vocabulary to a multiple of tp");
  BOOK_CHECK(shape.stages == degrees.pp,
             "check_3d: the schedule has p = " << shape.stages << " stages, the grid pp = "
                                               << degrees.pp << "; make them equal");
  const int parts = shape.virtual_stages();
  BOOK_CHECK(config.n_layer % parts == 0,
             "check_3d: " << config.n_layer << " layers do not divide into pp × v = " << parts
                          << " stages of equal size; choose pp (and v) dividing the layers");
}
//! [check_3d]

//! [execute_3d]
template <typename T>
RankResult execute_3d(coll::ProcessGrid& grid, const Schedule& schedule,
                      std::span<const std::unique_ptr<train::Model<T>>> chunks,
                      std::span<const train::Batch> micro_batches, const ExecuteOptions& options) {
  for (const auto& chunk : chunks) {
    const train::TensorParallelSlice& slice = chunk->part().tensor_parallel;
    BOOK_CHECK(slice.size == grid.degrees().tp && slice.rank == grid.coordinates().tp,
               "execute_3d: a chunk holds tensor-parallel slice "
                   << slice.rank << " of " << slice.size << ", the grid puts this rank at "
                   << grid.coordinates().tp << " of " << grid.degrees().tp
                   << "; build the chunks with the grid's slice (Rank3D does)");
  }
  // The stage's blocks, embedding and head communicate over grid.tp() inside each F and B
  // (chapter 4's Model holds the seam); the activations travel between rank t of one stage and
  // rank t of the next.
  RankResult result = execute<T>(grid.pp(), schedule, chunks, micro_batches, options);
  for (const auto& chunk : chunks)
    grid.dp().all_reduce(coll::Buffer(chunk->grads().span()), coll::ReduceOp::kAvg);
  grid.dp().all_reduce(coll::Buffer(std::span<double>(&result.loss, 1)), coll::ReduceOp::kAvg);
  return result;
}
//! [execute_3d]

template <typename T>
Rank3D<T>::Rank3D(coll::Communicator& world, const coll::GridDegrees& degrees,
                  const train::Config& config, int max_batch, const Shape& shape,
                  std::uint64_t seed)
    : grid_(checked(world, config, degrees, shape), degrees),
      tensor_parallel_(std::make_unique<tp::TensorParallelGroup<T>>(grid_.tp())) {
  // With tp > 1 the vocabulary is split too (chapter 7's vocabulary-parallel embedding, head and
  // cross-entropy); tp = 1 is the one-device model's own arithmetic.
  const bool split = degrees.tp > 1;
  const train::TensorParallelSlice slice{grid_.coordinates().tp, degrees.tp, split};
  if (split)
    seam_ = std::make_unique<tp::TensorParallelSeam<T>>(config, max_batch, tensor_parallel_.get(),
                                                        tp::SequenceParallel::kOff);
  chunks_ = make_rank_models<T>(config, max_batch, shape,
                                even_boundaries(config.n_layer, shape.virtual_stages()),
                                grid_.coordinates().pp, seed, slice, seam_.get());
}

template <typename T>
RankResult Rank3D<T>::step(const Schedule& schedule, std::span<const train::Batch> micro_batches,
                           const ExecuteOptions& options) {
  return execute_3d<T>(grid_, schedule, chunks_, micro_batches, options);
}

#define BOOK_PP_3D_INSTANTIATE(T)                                                          \
  template RankResult execute_3d<T>(coll::ProcessGrid&, const Schedule&,                   \
                                    std::span<const std::unique_ptr<train::Model<T>>>,     \
                                    std::span<const train::Batch>, const ExecuteOptions&); \
  template class Rank3D<T>;
BOOK_PP_3D_INSTANTIATE(float)
BOOK_PP_3D_INSTANTIATE(double)

}  // namespace book::pp
