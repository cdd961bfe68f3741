// Reference solution of ep.dispatch_combine: the two all-to-alls of an MoE layer, with the count
// exchange that makes their uneven sizes known.
#include <algorithm>
#include <span>

#include "chapters/07_tensor_parallel/expert_dispatch.h"

namespace book::ep {

//! [dispatch]
template <typename T>
void dispatch(const T* x, int channels, const Routing& routing, const ExpertPlacement& placement,
              coll::Communicator& comm, DispatchPlan& plan, std::vector<T>& received) {
  check_dispatch(routing, placement, comm.size(), comm.rank());
  const int ranks = placement.ranks, per_rank = placement.per_rank(), k = routing.top_k;
  const std::size_t width = static_cast<std::size_t>(channels);
  // Send order: expert by expert (so rank by rank), slot by slot.
  std::vector<std::size_t> first_of_expert(routing.experts + 1, 0);
  for (int e = 0; e < routing.experts; ++e)
    first_of_expert[e + 1] = first_of_expert[e] + static_cast<std::size_t>(routing.load[e]);
  plan.order.assign(first_of_expert.back(), -1);
  for (std::size_t choice = 0; choice < routing.slot.size(); ++choice)
    if (routing.slot[choice] >= 0)
      plan.order[first_of_expert[routing.expert[choice]] + routing.slot[choice]] =
          static_cast<int>(choice);
  plan.send_rows.assign(ranks, 0);
  for (int e = 0; e < routing.experts; ++e) plan.send_rows[placement.owner(e)] += routing.load[e];

  // Counts first: rank r learns how many rows of each of its experts every rank will send.
  std::vector<T> my_counts(routing.experts),
      their_counts(static_cast<std::size_t>(ranks) * per_rank);
  for (int e = 0; e < routing.experts; ++e) my_counts[e] = static_cast<T>(routing.load[e]);
  const std::vector<std::size_t> per_peer(ranks, static_cast<std::size_t>(per_rank));
  comm.all_to_all(std::span<const T>(my_counts), per_peer, std::span<T>(their_counts), per_peer);
  plan.recv_per_expert.assign(their_counts.size(), 0);
  plan.recv_rows.assign(ranks, 0);
  for (std::size_t i = 0; i < their_counts.size(); ++i) {
    plan.recv_per_expert[i] = static_cast<std::size_t>(their_counts[i]);
    plan.recv_rows[i / per_rank] += plan.recv_per_expert[i];
  }

  // Then the rows, packed in send order.
  std::vector<T> packed(plan.order.size() * width);
  for (std::size_t row = 0; row < plan.order.size(); ++row) {
    const T* token = x + static_cast<std::size_t>(plan.order[row] / k) * width;
    std::copy(token, token + width, packed.begin() + row * width);
  }
  std::vector<std::size_t> send_counts(ranks), recv_counts(ranks);
  for (int r = 0; r < ranks; ++r) {
    send_counts[r] = plan.send_rows[r] * width;
    recv_counts[r] = plan.recv_rows[r] * width;
  }
  received.resize(plan.rows_received() * width);
  comm.all_to_all(std::span<const T>(packed), send_counts, std::span<T>(received), recv_counts);
}
//! [dispatch]

//! [combine]
template <typename T>
void combine(const T* expert_out, int channels, const Routing& routing, const T* gates,
             const DispatchPlan& plan, coll::Communicator& comm, std::vector<T>& returned, T* y) {
  const int ranks = static_cast<int>(plan.send_rows.size()), k = routing.top_k;
  const std::size_t width = static_cast<std::size_t>(channels);
  std::vector<std::size_t> send_counts(ranks), recv_counts(ranks);
  for (int r = 0; r < ranks; ++r) {
    send_counts[r] = plan.recv_rows[r] * width;  // the way back: what came in goes out
    recv_counts[r] = plan.send_rows[r] * width;
  }
  returned.resize(plan.rows_sent() * width);
  comm.all_to_all(std::span<const T>(expert_out, plan.rows_received() * width), send_counts,
                  std::span<T>(returned), recv_counts);
  for (std::size_t row = 0; row < plan.order.size(); ++row) {
    const int choice = plan.order[row];
    T* out = y + static_cast<std::size_t>(choice / k) * width;
    const T* back = returned.data() + row * width;
    for (std::size_t c = 0; c < width; ++c) out[c] += gates[choice] * back[c];
  }
}
//! [combine]

#define BOOK_EP_DISPATCH(T)                                                              \
  template void dispatch<T>(const T*, int, const Routing&, const ExpertPlacement&,       \
                            coll::Communicator&, DispatchPlan&, std::vector<T>&);        \
  template void combine<T>(const T*, int, const Routing&, const T*, const DispatchPlan&, \
                           coll::Communicator&, std::vector<T>&, T*);

BOOK_EP_DISPATCH(float)
BOOK_EP_DISPATCH(double)

}  // namespace book::ep
