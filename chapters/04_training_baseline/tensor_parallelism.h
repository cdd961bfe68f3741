/// @file
/// The seam through which a block, the embedding and the LM head do the parts that differ on a
/// tensor-parallel rank. A block is two regions, attention and MLP, each entered through a
/// LayerNorm and a column-parallel projection (W_qkv, W_fc) and left through a row-parallel one
/// (W_out, W_proj); the embedding and the head are split by vocabulary rows. Between the regions
/// (the residual stream, the LayerNorms) a rank holds either every token or, with the tokens
/// split over the ranks too, its share of them ("held rows").
///
/// The model calls only this interface; it never talks to other ranks itself. OneDevice (below)
/// is the whole model on one device: every projection whole, every row held, every sum complete,
/// exactly the arithmetic of layers.h. A tensor-parallel rank supplies another implementation,
/// built on its group's collectives.
#pragma once

#include <cstddef>
#include <span>

#include "chapters/04_training_baseline/parameters.h"

namespace book::train {

/// Which of a block's four projections (BlockTensors' w_qkv, w_out, w_fc, w_proj).
enum class Projection { kQkv, kOut, kFc, kProj };

/// One projection y = x·W + b as this rank stores it (row-major, W is [in, out]): its columns
/// (column-parallel: in whole, out its share) or its rows (row-parallel: in its share, out
/// whole, b replicated).
template <typename T>
struct ProjectionWeights {
  Projection which = Projection::kQkv;  ///< which of the block's projections
  const T* w = nullptr;                 ///< [in, out]
  const T* bias = nullptr;              ///< [out]
  int in = 0;                           ///< input features this rank multiplies
  int out = 0;                          ///< output features this rank produces
};

/// Where a projection's backward adds its weight and bias gradients (same shapes).
template <typename T>
struct ProjectionGrads {
  T* w = nullptr;     ///< [in, out]
  T* bias = nullptr;  ///< [out]
};

/// The tensor-parallel seam of one model part on one rank. "rows" is always the micro-batch's
/// whole token count N = batch · seq_len; a region works on all N rows, the tensors between
/// regions on held_rows(N) of them. Every rank of a group calls the same methods in the same
/// order. T is float (training) or double (tests).
template <typename T>
class TensorParallelism {
 public:
  virtual ~TensorParallelism() = default;

  /// This rank's index in the tensor-parallel group, 0..size()-1.
  virtual int rank() const = 0;
  /// Ranks in the group, t.
  virtual int size() const = 0;
  /// Rows a rank holds between the regions for a micro-batch of `rows` tokens; throws
  /// book::Error if they cannot be held as this seam splits them.
  virtual int held_rows(int rows) const = 0;
  /// Rows to allocate between the regions for up to `rows` tokens.
  virtual std::size_t held_room(std::size_t rows) const = 0;

  /// Entering a region: LayerNorm of the held rows x [held, C] into `out`, `mean`, `rstd` (kept
  /// for the backward pass); returns the whole normalised rows [rows, C] the column-parallel
  /// projection reads (`out` itself when every row is held).
  virtual const T* norm_forward(const T* x, const T* gain, const T* bias, int rows, int channels,
                                T* out, T* mean, T* rstd) = 0;
  /// The whole rows [rows, C] of a region's normalised input again, from the held rows `held`
  /// that norm_forward kept (for a weight gradient).
  virtual const T* whole_rows(const T* held, int rows, int channels) = 0;
  /// Completes `d_whole` [rows, C], this rank's share of the gradient of a region's whole input
  /// that did not come from a column-parallel projection's backward (the tied LM head's), the way
  /// column_backward completes its own.
  virtual void complete_input_gradient(T* d_whole, int rows, int channels) = 0;
  /// A region entry's backward: from the gradient of its whole normalised rows `d_whole` (as
  /// column_backward or complete_input_gradient left it), LayerNorm's backward on the held rows,
  /// **adding** into dx [held, C], dgain and dbias.
  virtual void norm_backward(const T* d_whole, const T* x, const T* gain, const T* mean,
                             const T* rstd, int rows, int channels, T* dx, T* dgain, T* dbias) = 0;

  /// A column-parallel projection: y [rows, out] = x [rows, in] · W + b (x whole).
  virtual void column_forward(const ProjectionWeights<T>& p, const T* x, int rows, T* y) = 0;
  /// Its backward: adds dW, db and the gradient of x into dx [rows, in] (zeroed by the caller):
  /// this rank's share of the gradient of the region's whole input (for norm_backward).
  virtual void column_backward(const ProjectionWeights<T>& p, const ProjectionGrads<T>& g,
                               const T* x, const T* dy, int rows, T* dx) = 0;
  /// Leaving a region: a row-parallel projection, y [held, out] = Σ_ranks x·W + b, the bias
  /// counted once.
  virtual void row_forward(const ProjectionWeights<T>& p, const T* x, int rows, T* y) = 0;
  /// Its backward, from dy [held, out]: adds the gradient of x into dx [rows, in] (zeroed by
  /// the caller), and dW and db.
  virtual void row_backward(const ProjectionWeights<T>& p, const ProjectionGrads<T>& g, const T* x,
                            const T* dy, int rows, T* dx) = 0;

  /// The embedding: out [held, C] = wte[tokens] + wpe[positions], with `wte` this rank's rows of
  /// the token embedding, ids [vocab_begin, vocab_begin + vocab_rows).
  virtual void embedding_forward(const int* tokens, int batch, int seq_len, const T* wte,
                                 int vocab_begin, int vocab_rows, const T* wpe, int channels,
                                 T* out) = 0;
  /// Its backward from d_out [held, C]: adds into dwte (this rank's rows) and dwpe.
  virtual void embedding_backward(const int* tokens, int batch, int seq_len, int vocab_begin,
                                  int vocab_rows, const T* d_out, int channels, T* dwte,
                                  T* dwpe) = 0;
  /// The mean cross-entropy of `rows` rows whose logits this rank holds for ids
  /// [vocab_begin, vocab_begin + vocab_rows) (targets: ids of the whole vocabulary or -1);
  /// writes this rank's columns of the softmax into probs.
  virtual T cross_entropy_forward(const T* logits, const int* targets, int rows, int vocab_begin,
                                  int vocab_rows, T* probs) = 0;
  /// Its backward: **writes** dlogits [rows, vocab_rows].
  virtual void cross_entropy_backward(const T* probs, const int* targets, int rows, int vocab_begin,
                                      int vocab_rows, T scale, T* dlogits) = 0;

  /// After a step's last backward pass: completes the gradients the passes left partial (those
  /// of replicated tensors summed over this rank's held rows only), in `grads` laid out as
  /// `layout`.
  virtual void finish_gradients(const ParameterLayout& layout, std::span<T> grads) = 0;
};

/// The whole model on one device: chapter 4's layers, nothing to split, nothing to sum. Not
/// final: an inference engine that keeps its weights in another format derives from it and
/// overrides column_forward and row_forward (the forward projections) to read them.
template <typename T>
class OneDevice : public TensorParallelism<T> {
 public:
  int rank() const override { return 0; }                                  ///< 0
  int size() const override { return 1; }                                  ///< 1
  int held_rows(int rows) const override { return rows; }                  ///< every row
  std::size_t held_room(std::size_t rows) const override { return rows; }  ///< every row
  /// layernorm_forward; returns `out`.
  const T* norm_forward(const T* x, const T* gain, const T* bias, int rows, int channels, T* out,
                        T* mean, T* rstd) override;
  /// `held` itself.
  const T* whole_rows(const T* held, int, int) override { return held; }
  /// Nothing: the gradient is whole.
  void complete_input_gradient(T*, int, int) override {}
  /// layernorm_backward.
  void norm_backward(const T* d_whole, const T* x, const T* gain, const T* mean, const T* rstd,
                     int rows, int channels, T* dx, T* dgain, T* dbias) override;
  /// linear_forward.
  void column_forward(const ProjectionWeights<T>& p, const T* x, int rows, T* y) override;
  /// linear_backward (W_qkv's input gradient as three products, q's, k's then v's, so each
  /// element's sum keeps that order).
  void column_backward(const ProjectionWeights<T>& p, const ProjectionGrads<T>& g, const T* x,
                       const T* dy, int rows, T* dx) override;
  /// linear_forward.
  void row_forward(const ProjectionWeights<T>& p, const T* x, int rows, T* y) override;
  /// linear_backward.
  void row_backward(const ProjectionWeights<T>& p, const ProjectionGrads<T>& g, const T* x,
                    const T* dy, int rows, T* dx) override;
  /// embedding_forward (the whole vocabulary).
  void embedding_forward(const int* tokens, int batch, int seq_len, const T* wte, int, int,
                         const T* wpe, int channels, T* out) override;
  /// embedding_backward.
  void embedding_backward(const int* tokens, int batch, int seq_len, int, int, const T* d_out,
                          int channels, T* dwte, T* dwpe) override;
  /// cross_entropy_forward.
  T cross_entropy_forward(const T* logits, const int* targets, int rows, int, int vocab_rows,
                          T* probs) override;
  /// cross_entropy_backward.
  void cross_entropy_backward(const T* probs, const int* targets, int rows, int, int vocab_rows,
                              T scale, T* dlogits) override;
  /// Nothing: every gradient is complete.
  void finish_gradients(const ParameterLayout&, std::span<T>) override {}
};

/// A shared OneDevice (it holds no state): what a model or block uses when given no seam.
template <typename T>
OneDevice<T>& one_device();

}  // namespace book::train
