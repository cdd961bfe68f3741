// Exercise ep.dispatch_combine: replace each BOOK_NOT_IMPLEMENTED. The contract is in
// chapters/07_tensor_parallel/expert_dispatch.h. dispatch: first call
// check_dispatch(routing, placement, comm.size(), comm.rank()) (it refuses a placement that does
// not fit the routing or the group); then put each kept choice at
// order[first row of its expert + its slot] (experts are numbered rank by rank, so that is also
// rank by rank); send_rows[r] = Σ load of r's experts; one comm.all_to_all of the E load counts
// (E/ranks to each rank, as T) tells each rank recv_per_expert, hence recv_rows; pack the rows of
// x in `order` and send them with one comm.all_to_all (counts in elements: rows × channels).
// combine: the same all_to_all with the counts swapped, then y[token] += gate · returned row.
#include "chapters/07_tensor_parallel/expert_dispatch.h"
#include "common/check.h"

namespace book::ep {

template <typename T>
void dispatch(const T* x, int channels, const Routing& routing, const ExpertPlacement& placement,
              coll::Communicator& comm, DispatchPlan& plan, std::vector<T>& received) {
  (void)x, (void)channels, (void)routing, (void)placement, (void)comm, (void)plan;
  (void)received;
  BOOK_NOT_IMPLEMENTED("ep.dispatch_combine", "exercises/07_tensor_parallel/expert_dispatch.cc",
                       "chapters/07_tensor_parallel/README.md, section Expert parallelism");
}

template <typename T>
void combine(const T* expert_out, int channels, const Routing& routing, const T* gates,
             const DispatchPlan& plan, coll::Communicator& comm, std::vector<T>& returned, T* y) {
  (void)expert_out, (void)channels, (void)routing, (void)gates, (void)plan, (void)comm;
  (void)returned, (void)y;
  BOOK_NOT_IMPLEMENTED("ep.dispatch_combine", "exercises/07_tensor_parallel/expert_dispatch.cc",
                       "chapters/07_tensor_parallel/README.md, section Expert parallelism");
}

#define BOOK_EP_DISPATCH(T)                                                              \
  template void dispatch<T>(const T*, int, const Routing&, const ExpertPlacement&,       \
                            coll::Communicator&, DispatchPlan&, std::vector<T>&);        \
  template void combine<T>(const T*, int, const Routing&, const T*, const DispatchPlan&, \
                           coll::Communicator&, std::vector<T>&, T*);

BOOK_EP_DISPATCH(float)
BOOK_EP_DISPATCH(double)

}  // namespace book::ep
