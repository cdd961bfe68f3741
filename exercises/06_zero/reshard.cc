// Exercise zero.reshard_checkpoint — write reshard (declared in chapters/06_zero/reshard.h):
// check that `mine` has one master, m and v span per range, each of the range's size; check that
// every saved piece's spans hold its range's size and that no two saved ranges overlap (a
// book::Error naming the piece or both ranges); for every
// new piece and every saved piece, copy the elements both contain (master, m and v) to their
// places; if some element of a new piece is in no saved piece, throw a book::Error naming it
// ("the checkpoint does not hold element ...").
// Graded by tests/06_zero/reshard_test.cc:
//   bazel test --config=exercises //tests/06_zero:reshard_test
#include "chapters/06_zero/reshard.h"

#include "common/check.h"

namespace book::zero {

void reshard(std::span<const SavedPiece> saved, const NewPieces& mine) {
  (void)saved, (void)mine;
  BOOK_NOT_IMPLEMENTED("zero.reshard_checkpoint", "exercises/06_zero/reshard.cc",
                       "chapters/06_zero/README.md, section Sharded checkpoints");
}

}  // namespace book::zero
