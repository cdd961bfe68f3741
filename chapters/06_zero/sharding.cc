// The shard plan, and the exact model-state bytes and traffic of a rank.
#include "chapters/06_zero/sharding.h"

#include <algorithm>

#include "chapters/03_collectives/types.h"
#include "common/check.h"

namespace book::zero {
namespace {

bool mixed(DType precision) { return precision == DType::kBF16 || precision == DType::kF16; }

}  // namespace

ShardPlan plan_shards(std::vector<ddp::FlatRange> buckets, int world, int rank, Stage stage) {
  BOOK_CHECK(world >= 1 && rank >= 0 && rank < world,
             "shard plan: rank " << rank << " is outside a world of " << world);
  BOOK_CHECK(!buckets.empty(), "shard plan: no buckets; plan them with ddp::plan_buckets");
  ShardPlan plan;
  plan.world = world;
  plan.rank = rank;
  std::size_t expected_end = buckets.front().end;
  for (const ddp::FlatRange& b : buckets) {
    BOOK_CHECK(b.end == expected_end && b.begin < b.end,
               "shard plan: buckets must tile the buffer from its end down to 0 ("
                   << ddp::describe(buckets) << ")");
    expected_end = b.begin;
  }
  BOOK_CHECK(expected_end == 0,
             "shard plan: the last bucket must start at 0 (" << ddp::describe(buckets) << ")");
  plan.total = buckets.front().end;
  for (const ddp::FlatRange& b : buckets) {
    ddp::FlatRange piece = b;
    if (stage != Stage::kDdp) {
      const coll::Shard s = coll::shard_of(b.size(), world, rank);
      piece = {b.begin + s.offset, b.begin + s.offset + s.count};
    }
    plan.pieces.push_back(piece);
    plan.offsets.push_back(plan.owned);
    plan.owned += piece.size();
    plan.largest_bucket = std::max(plan.largest_bucket, b.size());
    plan.largest_piece = std::max(plan.largest_piece, piece.size());
  }
  plan.buckets = std::move(buckets);
  return plan;
}

ModelStateBytes model_state_bytes(Stage stage, DType precision, std::size_t total,
                                  std::size_t owned) {
  // 16 bytes per parameter at most: 2^59 parameters keep every sum below 2^64 (2^63).
  BOOK_CHECK(total <= (std::size_t{1} << 59),
             "model_state_bytes: " << total << " parameters is above 2^59, whose 16 bytes each "
                                   << "overflow 64 bits; no machine trains that many");
  BOOK_CHECK(owned <= total, "model_state_bytes: a rank owns " << owned << " of " << total
                                                               << " parameters; owned must be <= "
                                                               << "total");
  const std::uint64_t psi = total;
  const std::uint64_t s = stage == Stage::kDdp ? psi : owned;
  ModelStateBytes b;
  if (stage == Stage::kZero3) {  // every category sharded: 16 bytes per owned parameter
    b.parameters = (mixed(precision) ? 2 : 4) * s;
    b.gradients = (mixed(precision) ? 2 : 4) * s;
    b.master_weights = mixed(precision) ? 4 * s : 0;
    b.optimizer_states = 8 * s;
    return b;
  }
  if (mixed(precision)) {
    b.parameters = 2 * psi;
    b.gradients = stage == Stage::kZero2 ? 2 * s : 2 * psi;
    b.master_weights = 4 * s;
  } else {
    b.parameters = 4 * psi;
    b.gradients = 4 * psi;
  }
  b.optimizer_states = 8 * s;
  return b;
}

std::uint64_t communication_bytes(const ShardPlan& plan, Stage stage, DType precision) {
  if (stage == Stage::kDdp) return 0;
  const std::uint64_t wire = mixed(precision) ? 2 : 4;
  std::uint64_t bytes = plan.largest_piece * wire;
  if (stage == Stage::kZero2 && mixed(precision)) bytes += plan.largest_bucket * 2;
  return bytes;
}

double paper_bytes_per_rank(Stage stage, double psi, double world, double k) {
  switch (stage) {
    case Stage::kDdp:
      return (2 + 2 + k) * psi;
    case Stage::kZero1:
      return 4 * psi + k * psi / world;
    case Stage::kZero2:
      return 2 * psi + (2 + k) * psi / world;
    case Stage::kZero3:
      return (2 + 2 + k) * psi / world;
  }
  return 0;
}

StepTraffic traffic_per_step(const ShardPlan& plan, Stage stage, DType precision) {
  StepTraffic t;
  const int n = plan.world, r = plan.rank;
  for (const ddp::FlatRange& b : plan.buckets) {
    t.collectives += stage == Stage::kDdp ? 1 : 2;
    if (n == 1) continue;
    const std::uint64_t mine = coll::shard_of(b.size(), n, r).count;
    const std::uint64_t next = coll::shard_of(b.size(), n, (r + 1) % n).count;
    t.elements_sent += 2 * b.size() - mine - next;
  }
  t.bytes_sent = t.elements_sent * (mixed(precision) ? 2 : 4);
  return t;
}

}  // namespace book::zero
