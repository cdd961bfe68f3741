/// @file
/// Speculative decoding's rules: a small draft model proposes γ tokens, the target model scores
/// all γ + 1 positions in one pass, and a rule decides how many proposals to keep. The rules are
/// the chapter's exercises; the checks beside them are shared by both tracks.
///
/// Greedy rule: keep the longest prefix of the proposals that equals the target's own argmax at
/// each position, then append the target's argmax where they first differ (or after the last
/// proposal): the output is exactly the target's greedy output, whatever the draft says.
///
/// Sampling rule (Leviathan et al. 2023; Chen et al. 2023): a proposal x drawn from the draft's
/// q is kept with probability min(1, p(x) / q(x)); on rejection the token is drawn from the
/// residual max(0, p − q), normalised. The kept-or-resampled token is distributed exactly as p.
#pragma once

#include <span>

namespace book::spec {

/// Throws book::Error naming the value unless 1 <= gamma <= context − 1: γ proposals plus the
/// last accepted token are γ + 1 positions of one verification pass, which must fit in the
/// model's context of `context` positions.
void check_gamma(int gamma, int context);

/// Throws book::Error unless the draft's vocabulary is the target's (same size): a proposal is a
/// token id the target must score, and a different tokenizer would make the ids mean other things.
void check_same_vocabulary(int target_vocab, int draft_vocab);

/// Throws book::Error naming `name`, the index and the value unless `p` is a probability
/// distribution: not empty, every entry finite and >= 0, the sum within `tolerance` of 1.
void check_distribution(std::span<const double> p, const char* name, double tolerance = 1e-6);

/// The index that `uniform` in [0, 1) picks from the distribution `p` by its cumulative sum (the
/// last index with p > 0 if rounding leaves none). Throws book::Error if p is not a distribution
/// or uniform is outside [0, 1).
int sample_index(std::span<const double> p, double uniform);

/// What the greedy rule decided for one verification pass.
struct GreedyVerdict {
  int accepted = 0;    ///< proposals kept, 0..γ
  int next_token = 0;  ///< the target's token after them (its correction, or the bonus token)
};

/// Exercise spec.verify_greedy: `draft` holds γ proposed tokens; `target_logits` holds γ + 1 rows
/// of `vocab` logits, row i the target's logits for the position of draft[i] (row γ: the position
/// after the last proposal). Keep draft[i] while it equals the argmax of row i (the first index
/// on ties); the verdict is how many were kept and the argmax of the first row not kept.
/// Throws book::Error if draft is empty, vocab < 1, target_logits does not hold (γ + 1) · vocab
/// values, or a proposal is outside [0, vocab).
/// \exercise{spec.verify_greedy}
GreedyVerdict verify_greedy(std::span<const int> draft, std::span<const float> target_logits,
                            int vocab);

/// What the sampling rule decided at one position.
struct SampleVerdict {
  bool accepted = false;  ///< the proposal was kept
  int token = 0;          ///< the proposal if kept, else the token drawn from the residual
};

/// Exercise spec.rejection_sample: the draft proposed `draft_token`, drawn from `q`; the target's
/// distribution at that position is `p`. Keep it when u_accept < min(1, p[x] / q[x]); otherwise
/// return sample_index(r, u_residual) where r = max(0, p − q) normalised (if r sums to 0, which
/// rounding alone can cause, sample from p). Throws book::Error if p or q is not a distribution
/// (check_distribution), their sizes differ, draft_token is outside [0, size) or has q = 0 (the
/// draft could not have drawn it), or a uniform is outside [0, 1).
/// \exercise{spec.rejection_sample}
SampleVerdict rejection_sample(std::span<const double> p, std::span<const double> q,
                               int draft_token, double u_accept, double u_residual);

/// Exercise spec.expected_tokens: the mean number of tokens one verification pass produces when
/// each proposal is accepted independently with probability `alpha` and γ = `gamma` proposals are
/// made: 1 + α + α² + … + α^γ = (1 − α^(γ+1)) / (1 − α), and γ + 1 at α = 1. Throws book::Error
/// unless 0 <= alpha <= 1 and gamma >= 1.
/// \exercise{spec.expected_tokens}
double expected_tokens(double alpha, int gamma);

}  // namespace book::spec
