#include "chapters/04_training_baseline/partition.h"

#include "common/check.h"

namespace book::train {

void TensorParallelSlice::validate(const Config& config) const {
  BOOK_CHECK(size >= 1 && 0 <= rank && rank < size,
             "TensorParallelSlice: rank " << rank << " of " << size
                                          << " ranks; need 0 <= rank < size and size >= 1");
  BOOK_CHECK(config.n_head % size == 0,
             "TensorParallelSlice: " << size << " tensor-parallel ranks cannot split "
                                     << config.n_head
                                     << " heads evenly; use a tensor-parallel size that divides "
                                        "the number of heads");
  if (split_vocabulary)
    BOOK_CHECK(config.vocab_size % size == 0,
               "TensorParallelSlice: "
                   << size << " tensor-parallel ranks cannot split a vocabulary of "
                   << config.vocab_size << " tokens evenly; pad the vocabulary to a multiple of "
                   << size << " (Megatron-LM pads it to a multiple of 128·t)");
}

ModelPart ModelPart::resolved(const Config& config) const {
  ModelPart part = *this;
  if (part.last_layer < 0) part.last_layer = config.n_layer;
  BOOK_CHECK(0 <= part.first_layer && part.first_layer < part.last_layer &&
                 part.last_layer <= config.n_layer,
             "ModelPart: layers [" << part.first_layer << ", " << part.last_layer
                                   << ") are not a non-empty range inside 0.." << config.n_layer);
  part.tensor_parallel.validate(config);
  return part;
}

}  // namespace book::train
