// Exercises coll.ring_reduce_scatter, coll.ring_all_gather and coll.ring_all_reduce: replace each
// BOOK_NOT_IMPLEMENTED with your code. The contracts are in chapters/03_collectives/algorithms.h.
#include "chapters/03_collectives/algorithms.h"
#include "common/check.h"

namespace book::coll {

void ring_reduce_scatter(Communicator& comm, Buffer data, ReduceOp op) {
  (void)comm, (void)data, (void)op;
  BOOK_NOT_IMPLEMENTED("coll.ring_reduce_scatter", "exercises/03_collectives/ring.cc",
                       "chapters/03_collectives/README.md, section The ring");
}

void ring_all_gather(Communicator& comm, Buffer data) {
  (void)comm, (void)data;
  BOOK_NOT_IMPLEMENTED("coll.ring_all_gather", "exercises/03_collectives/ring.cc",
                       "chapters/03_collectives/README.md, section The ring");
}

void ring_all_reduce(Communicator& comm, Buffer data, ReduceOp op) {
  (void)comm, (void)data, (void)op;
  BOOK_NOT_IMPLEMENTED("coll.ring_all_reduce", "exercises/03_collectives/ring.cc",
                       "chapters/03_collectives/README.md, section The ring");
}

}  // namespace book::coll
