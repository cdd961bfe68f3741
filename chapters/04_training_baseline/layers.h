/// @file
/// The layers of the GPT, each a forward and a backward function over plain arrays.
///
/// Every function is a template instantiated for `float` (training) and `double` (the tests'
/// finite-difference references). Shapes: N = B · T rows (batch × time), C = d_model, row-major.
///
/// The convention for gradients: a backward function **adds** (+=) into the gradients of
/// parameters and of inputs, because both are sums (a weight used at every position, an input
/// that feeds two branches of a residual block). Only attention_backward overwrites its output.
#pragma once

#include <cstddef>

namespace book::train {

/// C = alpha · op(A) · op(B) + beta · C, row-major, BLAS semantics (beta == 0: C is not read).
/// For float it is chapter 1's sgemm, run by each of the step's threads on its own rows or columns
/// of C (threads.h); for double a plain triple loop (used by the tests).
template <typename T>
void matmul(bool trans_a, bool trans_b, int m, int n, int k, T alpha, const T* a, int lda,
            const T* b, int ldb, T beta, T* c, int ldc);

/// out[b,t,:] = wte[tokens[b,t],:] + wpe[t,:]. `tokens` holds B·T ids in [0, vocab).
template <typename T>
void embedding_forward(const int* tokens, int batch, int seq_len, const T* wte, const T* wpe,
                       int channels, T* out);

/// Adds dout[b,t,:] into dwte[tokens[b,t],:] and dwpe[t,:].
template <typename T>
void embedding_backward(const int* tokens, int batch, int seq_len, const T* dout, int channels,
                        T* dwte, T* dwpe);

/// LayerNorm over the last dimension of x [N, C]: out = (x - mean) · rstd · gain + bias, with
/// rstd = 1 / sqrt(var + 1e-5) (biased variance, as in PyTorch). Saves mean[N] and rstd[N].
template <typename T>
void layernorm_forward(const T* x, const T* gain, const T* bias, int rows, int channels, T* out,
                       T* mean, T* rstd);

/// Exercise train.layernorm_backward: given dout [N, C], the forward's input x, gain and its
/// saved mean and rstd, **adds** the gradients into dx [N, C], dgain [C] and dbias [C].
template <typename T>
void layernorm_backward(const T* dout, const T* x, const T* gain, const T* mean, const T* rstd,
                        int rows, int channels, T* dx, T* dgain, T* dbias);

/// y [N, out] (row stride ldy) = x [N, in] · W [in, out] (row stride ldw) + bias (may be null).
/// The strides let a tensor-parallel shard use a column block of a wider weight matrix.
template <typename T>
void linear_forward(const T* x, int rows, int in, const T* w, int ldw, const T* bias, int out, T* y,
                    int ldy);

/// Adds dx += dy · Wᵀ (skipped when dx is null), dW += xᵀ · dy (skipped when dw is null),
/// dbias += Σ_rows dy (skipped when dbias is null). dx is [N, in] contiguous; dy has row stride
/// ldy, W and dW stride ldw.
template <typename T>
void linear_backward(const T* dy, int ldy, const T* x, int rows, int in, const T* w, int ldw,
                     int out, T* dx, T* dw, T* dbias);

/// GELU, tanh approximation (GPT-2's): y = x/2 · (1 + tanh(√(2/π) (x + 0.044715 x³))).
template <typename T>
void gelu_forward(const T* x, std::size_t n, T* y);

/// Adds dx += dy · GELU'(x).
template <typename T>
void gelu_backward(const T* dy, const T* x, std::size_t n, T* dx);

/// Causal multi-head self-attention on `n_head` heads of `head_size` (possibly a tensor-parallel
/// slice of the model's heads). qkv is [B·T, 3·n_head·head_size]: each row holds the queries of
/// all heads, then the keys, then the values. Writes the softmax probabilities
/// att [B, n_head, T, T] (zero above the diagonal) and out [B·T, n_head·head_size], head h in
/// columns [h·head_size, (h+1)·head_size). Scores are scaled by 1/√head_size.
template <typename T>
void attention_forward(const T* qkv, int batch, int seq_len, int n_head, int head_size, T* att,
                       T* out);

/// Exercise train.attention_backward: given dout [B·T, n_head·head_size], the forward's qkv and
/// att, **writes** (overwrites) dqkv [B·T, 3·n_head·head_size].
template <typename T>
void attention_backward(const T* dout, const T* qkv, const T* att, int batch, int seq_len,
                        int n_head, int head_size, T* dqkv);

/// Softmax cross-entropy of logits [N, V] against targets[N]; a target of -1 is ignored (the
/// prompt positions of the addition task). Writes probs [N, V]; returns the mean loss over the
/// counted rows (0 when none counts).
template <typename T>
T cross_entropy_forward(const T* logits, const int* targets, int rows, int vocab, T* probs);

/// dlogits = scale · (probs - onehot(target)) / counted_rows on counted rows, 0 on ignored
/// rows (overwrites). `scale` is the loss scale of mixed precision (1 otherwise).
template <typename T>
void cross_entropy_backward(const T* probs, const int* targets, int rows, int vocab, T scale,
                            T* dlogits);

}  // namespace book::train
