// Reference solution of coll.all_to_all: the pairwise exchange.
#include <vector>

#include "chapters/03_collectives/algorithms.h"

namespace book::coll {

//! [all_to_all]
void all_to_all(Communicator& comm, ConstBuffer input, std::span<const std::size_t> send_counts,
                Buffer output, std::span<const std::size_t> recv_counts) {
  const int n = comm.size(), r = comm.rank();
  // Where each block starts: prefix sums of the counts.
  std::vector<std::size_t> send_at(n + 1, 0), recv_at(n + 1, 0);
  for (int j = 0; j < n; ++j) {
    send_at[j + 1] = send_at[j] + send_counts[j];
    recv_at[j + 1] = recv_at[j] + recv_counts[j];
  }
  copy_into(output.slice(recv_at[r], recv_counts[r]), input.slice(send_at[r], send_counts[r]));
  // Step s pairs every rank with the one s ahead (to send) and s behind (to receive), so every
  // step is a permutation: each rank sends one block and receives one, and nobody waits twice.
  for (int s = 1; s < n; ++s) {
    const int to = (r + s) % n, from = (r - s + n) % n;
    comm.sendrecv(input.slice(send_at[to], send_counts[to]), to,
                  output.slice(recv_at[from], recv_counts[from]), from, kTagAllToAll);
  }
}
//! [all_to_all]

}  // namespace book::coll
