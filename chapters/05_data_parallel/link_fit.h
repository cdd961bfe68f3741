/// @file
/// α and B of one link from a ping-pong: two ranks bounce a message of S bytes back and forth, and
/// half a round trip is one message's time, t(S) = α + S/B (Hockney). A small message measures α
/// (latency), a large one B (bandwidth); two sizes solve for both. On the namespace cluster
/// (tools/cluster/) a ping-pong across nodes gives the slow link's α-β, one inside a node the
/// shared-memory link's, and scaling_model.h's predict_step then predicts this cluster's all-reduce
/// and step times, to be held against the measured ones: the same model the chapter runs for
/// 8 → 64 H100s with sourced figures.
#pragma once

#include "chapters/05_data_parallel/scaling_model.h"

namespace book::ddp {

/// The link whose one-way message times are `small_s` for `small_bytes` and `large_s` for
/// `large_bytes`: B = (large − small bytes) / (large_s − small_s), α = small_s − small_bytes / B.
/// Throws book::Error for sizes that do not increase, a time that is not positive and finite, or
/// times that give no positive B or a negative α (the measurement was noise: time longer).
Link fit_ping_pong(double small_bytes, double small_s, double large_bytes, double large_s);

/// One message of `bytes` on `link`: α + S/B.
double message_seconds(double bytes, const Link& link);

}  // namespace book::ddp
