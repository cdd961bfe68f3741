/// @file
/// The loss over a vocabulary split across ranks (Megatron-LM's vocab_parallel_cross_entropy):
/// each rank holds its V/t columns of the logits, [rows, V/t], and the softmax cross-entropy is
/// computed without ever gathering the [rows, V] logits — for a 50k–250k-token vocabulary those
/// would be the largest activation of the model. A row's loss needs only three numbers from the
/// whole vocabulary: the maximum logit (for a stable exponential), Σ exp(z − max), and the
/// target's logit. Each is a reduction of per-rank numbers, so O(rows) elements move instead of
/// O(rows · V).
#pragma once

#include "chapters/07_tensor_parallel/tensor_parallel_comm.h"

namespace book::tp {

/// Exercise tp.parallel_cross_entropy (forward): logits [rows, vocab_local] are this rank's
/// columns, token ids vocab_begin … vocab_begin + vocab_local − 1; targets [rows] are ids of the
/// whole vocabulary (t · vocab_local ids), or -1 (ignored); throw book::Error naming the row and
/// the target for any other value, before communicating. Writes probs [rows, vocab_local], this
/// rank's columns of the softmax, and returns the mean loss over the counted rows (0 when none
/// counts), the same on every rank. Communication: an all-gather of each rank's row maxima (rows
/// elements per rank; the global maximum is the largest of the t gathered), then one all-reduce
/// of 2·rows elements (each rank's Σ exp(z − max) over its columns, and the target's logit minus
/// the maximum, which only the rank holding the target contributes). `scratch` has room for
/// rows · (t + 3) elements.
/// \exercise{tp.parallel_cross_entropy}
template <typename T>
T parallel_cross_entropy_forward(const T* logits, const int* targets, int rows, int vocab_local,
                                 int vocab_begin, T* probs, T* scratch,
                                 TensorParallelComm<T>& comm);

/// Exercise tp.parallel_cross_entropy (backward): **writes** dlogits [rows, vocab_local] =
/// scale · (probs − onehot(target)) / counted rows on this rank's columns (the one-hot is 1 only
/// on the rank whose columns hold the target), and 0 on ignored rows. The count of targets ≥ 0 is
/// the same on every rank, so nothing moves.
/// \exercise{tp.parallel_cross_entropy}
template <typename T>
void parallel_cross_entropy_backward(const T* probs, const int* targets, int rows, int vocab_local,
                                     int vocab_begin, T scale, T* dlogits);

}  // namespace book::tp
