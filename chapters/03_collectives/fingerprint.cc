// The collective fingerprint check (issue 19): before a collective moves any data, every rank
// learns what every other rank called, so ranks that pass the same bytes as different types,
// counts or reduce operations get an error instead of garbage.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string_view>
#include <vector>

#include "chapters/03_collectives/communicator.h"
#include "common/check.h"

namespace book::coll {

bool fingerprint_check_from_environment() {
  const char* value = std::getenv("BOOK_COLL_CHECK");
  return value != nullptr && std::string_view(value) == "1";
}

namespace {

// What one rank called: 16 bytes, compared whole (no padding: every byte is a field).
struct Fingerprint {
  std::uint8_t collective;  // Communicator::Collective
  std::uint8_t dtype;       // DType
  std::int8_t op;           // ReduceOp, or -1
  std::uint8_t unused = 0;
  std::int32_t root;  // or -1
  std::uint64_t count;
};
static_assert(sizeof(Fingerprint) == 16);

bool operator==(const Fingerprint& x, const Fingerprint& y) {
  return std::memcmp(&x, &y, sizeof x) == 0;
}

// In the order of Communicator::Collective.
const char* collective_name(std::uint8_t collective) {
  static constexpr const char* kNames[] = {
      "all_reduce", "reduce_scatter", "all_gather", "broadcast", "reduce", "all_to_all", "barrier"};
  return collective < std::size(kNames) ? kNames[collective] : "an unknown collective";
}

// "all_reduce(16 x f32, sum)", "broadcast(8 x bf16, root 2)", "all_to_all(f32)", "barrier()".
std::string describe(const Fingerprint& f) {
  std::ostringstream out;
  out << collective_name(f.collective) << "(";
  const std::string_view name = collective_name(f.collective);
  if (name != "barrier") {
    if (name != "all_to_all") out << f.count << " x ";
    out << dtype_name(static_cast<DType>(f.dtype));
    if (f.op >= 0) out << ", " << op_name(static_cast<ReduceOp>(f.op));
    if (f.root >= 0) out << ", root " << f.root;
  }
  out << ")";
  return out.str();
}

}  // namespace

void Communicator::check_fingerprint(Collective collective, std::size_t count, DType dtype,
                                     std::optional<ReduceOp> op, int root) {
  if (!fingerprint_check_ || size() == 1) return;
  const Fingerprint mine{static_cast<std::uint8_t>(collective),
                         static_cast<std::uint8_t>(dtype),
                         static_cast<std::int8_t>(op ? static_cast<int>(*op) : -1),
                         0,
                         root,
                         static_cast<std::uint64_t>(count)};
  const int n = size();
  std::vector<Fingerprint> all(static_cast<std::size_t>(n));
  exchange_fingerprints(&mine, sizeof mine, all.data());
  // Every rank compares the same N fingerprints against rank 0's, so every rank throws the same
  // error (or none).
  const Fingerprint& first = all[0];
  std::ostringstream differ;
  int disagreeing = 0;
  for (int r = 1; r < n; ++r) {
    if (all[static_cast<std::size_t>(r)] == first) continue;
    if (++disagreeing <= 4)
      differ << "; rank " << r << " calls " << describe(all[static_cast<std::size_t>(r)]);
  }
  if (disagreeing > 4) differ << "; and " << disagreeing - 4 << " more ranks";
  BOOK_CHECK(disagreeing == 0,
             where() << ": the ranks disagree about the collective (fingerprint check): rank 0 "
                     << "calls " << describe(first) << differ.str()
                     << ". Every rank must call the same collectives in the same order with the "
                        "same counts, types, operations and root: do all ranks pass the same "
                        "counts?");
}

void Communicator::exchange_fingerprints(const void* mine, std::size_t bytes, void* all) {
  // Bruck's all-gather, turned to the ring's direction: held[i] is rank (rank() - i) % size()'s
  // bytes. In the round at distance d, a rank passes the first min(d, size - d) it holds to
  // rank + d and receives as many from rank - d; after ⌈log2 N⌉ rounds it holds all N. (Its first
  // wait is for its left neighbour, as in the ring: a rank that never arrives is named.) The
  // transport is called directly, so the counters and the trace show only the collective's own
  // traffic.
  const int n = size();
  std::vector<std::byte> held(static_cast<std::size_t>(n) * bytes);
  std::memcpy(held.data(), mine, bytes);
  for (int d = 1; d < n; d <<= 1) {
    const std::size_t round = static_cast<std::size_t>(std::min(d, n - d)) * bytes;
    transport_sendrecv(held.data(), round, (rank() + d) % n, held.data() + d * bytes, round,
                       (rank() - d + n) % n, kTagFingerprint);
  }
  for (int r = 0; r < n; ++r)  // into rank order
    std::memcpy(static_cast<std::byte*>(all) + static_cast<std::size_t>(r) * bytes,
                held.data() + static_cast<std::size_t>((rank() - r + n) % n) * bytes, bytes);
}

}  // namespace book::coll
