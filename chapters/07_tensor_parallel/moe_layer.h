/// @file
/// A mixture-of-experts MLP layer, expert-parallel: E GELU MLPs ("experts"), a router that sends
/// each token to its top-k of them under a capacity, and the combine that adds the chosen
/// experts' outputs weighted by the router's probabilities (Switch Transformers' gating, without
/// renormalising over the k). With expert parallelism the E experts are spread over the ranks of
/// an expert-parallel group, each rank routes its own tokens, and the tokens travel to their
/// experts and back by all-to-all (expert_dispatch.h). Without a communicator the layer holds
/// every expert and moves nothing: the single-rank reference the expert-parallel runs must match.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "chapters/03_collectives/communicator.h"
#include "chapters/07_tensor_parallel/expert_dispatch.h"
#include "chapters/07_tensor_parallel/moe_routing.h"

namespace book::ep {

/// What one forward pass of an MoE layer did on this rank.
struct MoeStats {
  double aux_loss = 0;             ///< the load-balancing loss of this rank's tokens
  int tokens = 0;                  ///< this rank's tokens
  int capacity = 0;                ///< slots per expert for them
  int kept = 0;                    ///< choices that reached an expert
  int dropped = 0;                 ///< choices dropped for capacity
  std::vector<int> load;           ///< [E] choices kept per expert (this rank's tokens)
  std::size_t rows_sent = 0;       ///< rows dispatched (to any rank, itself included)
  std::size_t rows_received = 0;   ///< rows this rank's experts computed
  std::size_t rows_to_others = 0;  ///< rows dispatched to other ranks (what crosses a link)
};

/// One MoE MLP layer on one rank of an expert-parallel group. Parameters in one flat buffer: the
/// router W_r [C, E] (replicated: every rank routes its own tokens), then this rank's experts in
/// order, each w_fc [C, F], b_fc [F], w_proj [F, C], b_proj [C]. Gradients in another with the
/// same layout. T is float or double.
template <typename T>
class MoeLayer {
 public:
  /// A layer of `config` holding the experts `placement` gives this rank; `comm` is the
  /// expert-parallel group (its size placement.ranks, its rank placement.rank), or null for the
  /// single-rank layer (placement.ranks must then be 1). Throws book::Error on a bad config,
  /// placement or group.
  MoeLayer(const MoeConfig& config, const ExpertPlacement& placement,
           coll::Communicator* comm = nullptr);

  /// The same whole layer on every placement: the router from `seed`, expert e from seed + 1 + e,
  /// weights uniform in ±scale, biases ±scale/2.
  void init(std::uint64_t seed, double scale = 0.5);

  /// y [tokens, C] (overwritten) = Σ over each token's kept choices of gate · expert(x), for this
  /// rank's x [tokens, C]. Keeps what backward() needs; x must stay valid until then.
  MoeStats forward(const T* x, int tokens, T* y);
  /// Given dy [tokens, C] for the last forward's y, **writes** dx [tokens, C] and **adds** the
  /// gradients of the router (from the gates and from the load-balancing loss, whose weight is
  /// config.aux_loss_weight) and of this rank's experts (from every rank's tokens routed to them).
  void backward(const T* dy, T* dx);

  const MoeConfig& config() const { return config_; }              ///< the shape
  const ExpertPlacement& placement() const { return placement_; }  ///< the experts held
  std::span<T> params() { return params_; }                        ///< flat parameters
  std::span<T> grads() { return grads_; }                          ///< flat gradients
  std::span<const T> grads() const { return grads_; }              ///< flat gradients
  void zero_grad();                                                ///< gradients to zero
  /// Elements of the router, C · E.
  std::size_t router_size() const;
  /// Elements of one expert, 2·C·F + F + C.
  std::size_t expert_size() const;
  /// Local expert j's elements in the flat buffers: [router_size() + j·expert_size(), +
  /// expert_size()).
  std::size_t expert_offset(int local_expert) const;
  /// The last forward's routing and routes.
  const Routing& routing() const { return routing_; }
  /// The last forward's all-to-all plan.
  const DispatchPlan& plan() const { return plan_; }

 private:
  void experts_forward();
  void experts_backward();
  void permute(const std::vector<T>& source_major, std::vector<T>& expert_major,
               bool to_expert) const;
  void exchange(const std::vector<T>& out, std::vector<T>& in, bool forward_direction);

  MoeConfig config_;
  ExpertPlacement placement_;
  coll::Communicator* comm_;
  std::vector<T> params_, grads_;
  // The last forward, for backward.
  const T* x_ = nullptr;
  int tokens_ = 0;
  std::vector<T> probs_, gates_;  // [N, E], [N·k]
  Routing routing_;
  DispatchPlan plan_;
  std::vector<T> received_, expert_in_, fc_, fc_gelu_;  // rows as received / expert-major
  std::vector<T> expert_out_, out_back_, returned_;     // expert-major, source-major, send order
};

}  // namespace book::ep
