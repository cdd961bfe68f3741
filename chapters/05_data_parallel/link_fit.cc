// α and B of one link from two ping-pong sizes (link_fit.h).
#include "chapters/05_data_parallel/link_fit.h"

#include <cmath>

#include "common/check.h"

namespace book::ddp {

Link fit_ping_pong(double small_bytes, double small_s, double large_bytes, double large_s) {
  BOOK_CHECK(small_bytes >= 0 && large_bytes > small_bytes && std::isfinite(large_bytes),
             "fit_ping_pong: needs a large message above the small one, got "
                 << small_bytes << " and " << large_bytes << " bytes");
  BOOK_CHECK(small_s > 0 && large_s > 0 && std::isfinite(small_s) && std::isfinite(large_s),
             "fit_ping_pong: message times must be positive and finite, got "
                 << small_s << " s and " << large_s << " s");
  const double per_byte = (large_s - small_s) / (large_bytes - small_bytes);
  const double alpha = small_s - small_bytes * per_byte;
  BOOK_CHECK(per_byte > 0 && alpha >= 0,
             "fit_ping_pong: " << small_bytes << " bytes in " << small_s << " s and "
                               << large_bytes << " bytes in " << large_s
                               << " s give no positive bandwidth and non-negative latency; the "
                                  "measurement was noise: time more round trips");
  return {alpha, 1.0 / per_byte};
}

double message_seconds(double bytes, const Link& link) {
  return link.alpha_s + bytes / link.bytes_per_s;
}

}  // namespace book::ddp
