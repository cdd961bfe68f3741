/// @file
/// A mixture of experts' router, and where its experts live: the top-k choice of experts for each
/// token, the capacity that bounds how many tokens an expert takes, the tokens dropped beyond it,
/// and the load-balancing loss that keeps the router from sending everything to a few experts
/// (Shazeer et al., "Outrageously Large Neural Networks", 2017; Lepikhin et al., "GShard", 2020;
/// Fedus et al., "Switch Transformers", 2021).
#pragma once

#include <cstdint>
#include <vector>

namespace book::ep {

/// The shape of one MoE MLP layer.
struct MoeConfig {
  int d_model = 16;               ///< width of a token, C
  int d_hidden = 32;              ///< hidden units of each expert's MLP
  int experts = 4;                ///< E
  int top_k = 2;                  ///< experts each token is sent to, k
  double capacity_factor = 1.25;  ///< slack over a perfectly even split (GShard, Switch)
  double aux_loss_weight = 0.01;  ///< α of the load-balancing loss (Switch's value)

  /// Throws book::Error naming the first field out of range (k > E, capacity factor ≤ 0 or not
  /// finite, ...).
  void validate() const;
  /// Tokens one expert takes from a batch of `tokens`: ⌈capacity_factor · k · tokens / E⌉, at
  /// least 1 and at most k · tokens — each source rank's share of an expert's buffer (GShard's
  /// per-group capacity).
  int capacity(int tokens) const;
};

/// Where the experts live: E experts over the `ranks` ranks of an expert-parallel group, E/ranks
/// consecutive experts each (expert e on rank e / (E/ranks)).
struct ExpertPlacement {
  int experts = 1;  ///< E
  int ranks = 1;    ///< ranks in the expert-parallel group
  int rank = 0;     ///< this rank

  /// Throws book::Error when the experts cannot be spread evenly: more ranks than experts, E not
  /// divisible by the ranks, or a rank outside 0 … ranks − 1.
  void validate() const;
  int per_rank() const { return experts / ranks; }             ///< experts on each rank
  int owner(int expert) const { return expert / per_rank(); }  ///< the rank holding `expert`
  int first() const { return rank * per_rank(); }              ///< this rank's first expert
};

/// The router's decision for `tokens` tokens: choice i of token n (choice index n·k + i, i < k,
/// in order of decreasing probability) is expert `expert[n·k + i]`, at place `slot[n·k + i]` in
/// that expert's buffer — or dropped (slot −1) because the expert was full. Slots are given
/// first to every token's first choice in token order, then to the second choices, and so on
/// (GShard's priority), so a first choice is dropped only when first choices alone overflow.
struct Routing {
  int tokens = 0;             ///< N
  int top_k = 1;              ///< k
  int experts = 0;            ///< E
  int capacity = 0;           ///< slots per expert
  std::vector<int> expert;    ///< [N·k] the expert of each choice
  std::vector<int> slot;      ///< [N·k] its slot, or −1 when dropped
  std::vector<int> load;      ///< [E] choices kept per expert (≤ capacity)
  std::vector<int> assigned;  ///< [E] choices made per expert, kept or not
  int dropped = 0;            ///< choices dropped, Σ (assigned − load)

  /// Choices kept, N·k − dropped.
  int kept() const { return tokens * top_k - dropped; }
};

/// Routes `tokens` tokens whose router probabilities are probs [tokens, E] (each row a softmax):
/// each token's k most probable experts (ties to the lower index), then the slots under
/// config.capacity(tokens). Works in double; T is float or double.
template <typename T>
Routing route(const T* probs, int tokens, const MoeConfig& config);

/// What dispatch() requires before it communicates: a valid `placement` of the routing's E
/// experts over exactly the expert-parallel group (placement.ranks == comm_size, placement.rank ==
/// comm_rank), and a routing whose vectors have route()'s sizes. Throws book::Error naming the
/// values that disagree (a placement of 4 experts for a routing over 8 made dispatch write past
/// the end of its per-rank counts).
void check_dispatch(const Routing& routing, const ExpertPlacement& placement, int comm_size,
                    int comm_rank);

/// The load-balancing loss of Switch Transformers (eq. 4, with their f generalised to k choices):
/// α · E · Σ_e f_e · P_e, where f_e is the fraction of the N·k choices that picked expert e
/// (before capacity) and P_e the router's mean probability for e. Its minimum, α, is reached when
/// both are uniform. Only P_e carries a gradient: ∂/∂p_e(token n) = α · E · f_e / N.
template <typename T>
double load_balancing_loss(const T* probs, const Routing& routing, double aux_loss_weight);

}  // namespace book::ep
