// Ranks that must agree, compared with one all-gather of fingerprints (agreement.h).
#include "chapters/03_collectives/agreement.h"

#include <bit>
#include <sstream>
#include <vector>

#include "common/check.h"

namespace book::coll {

void require_same_on_every_rank(Communicator& comm, std::uint64_t fingerprint,
                                const std::string& who, const std::string& what,
                                const std::string& remedy) {
  // As the bits of a double: all_gather copies bytes, and f64 is a type every backend moves.
  const double mine = std::bit_cast<double>(fingerprint);
  std::vector<double> all(static_cast<std::size_t>(comm.size()));
  comm.all_gather(std::span<const double>(&mine, 1), std::span<double>(all));
  const auto bits = [&](std::size_t r) { return std::bit_cast<std::uint64_t>(all[r]); };
  std::ostringstream differ;
  std::size_t first = 0;
  for (std::size_t r = 1; r < all.size(); ++r)
    if (bits(r) != bits(0)) {
      differ << (differ.tellp() > 0 ? ", " : "") << r;
      if (first == 0) first = r;
    }
  BOOK_CHECK(differ.tellp() == 0, who << ": the " << what << " of rank(s) " << differ.str()
                                      << " differ from rank 0's (fingerprint " << std::hex
                                      << bits(first) << " vs " << bits(0) << std::dec
                                      << "): " << remedy);
}

}  // namespace book::coll
