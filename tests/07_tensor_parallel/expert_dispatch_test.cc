// Graded test of ep.dispatch_combine: 1, 2 and 4 thread ranks, 4 experts, each rank routing its
// own tokens (a different number per rank, so every count is uneven). dispatch() must deliver to
// each rank exactly the rows of its experts' kept choices, source by source, expert by expert,
// slot by slot; combine() must bring an expert function of each row back and add it, weighted
// by its gate, to its token. The bytes each rank sends are counted: the E/ranks counts to each
// other rank, then the rows routed to other ranks × C × 8 bytes, and the same rows back.
#include <string>
#include <vector>

#include "chapters/03_collectives/threads.h"
#include "chapters/07_tensor_parallel/expert_dispatch.h"
#include "common/testing/exercise.h"
#include "common/testing/expect_error.h"
#include "tests/07_tensor_parallel/tp_testing.h"

namespace book::ep {
namespace {

using tp::testing::expect_close;
using tp::testing::kNaN;
using tp::testing::random_vector;

constexpr int kExperts = 4, kChannels = 3;

MoeConfig config() {
  MoeConfig c;
  c.d_model = kChannels;
  c.experts = kExperts;
  c.top_k = 2;
  c.capacity_factor = 1.0;  // tight, so some choices are dropped
  return c;
}

// Rank r's tokens and routing (every rank can compute every rank's, for the expectations).
struct RankInput {
  int tokens;
  std::vector<double> x, probs, gates;
  Routing routing;
};

RankInput rank_input(int r) {
  RankInput in;
  in.tokens = 5 + 3 * r;
  in.x = random_vector(static_cast<std::size_t>(in.tokens) * kChannels, 100 + r);
  in.probs = random_vector(static_cast<std::size_t>(in.tokens) * kExperts, 200 + r, 0.1, 1.0);
  for (int n = 0; n < in.tokens; ++n) {  // rows of probabilities, skewed towards expert 1
    in.probs[n * kExperts + 1] += 0.4;
    double sum = 0;
    for (int e = 0; e < kExperts; ++e) sum += in.probs[n * kExperts + e];
    for (int e = 0; e < kExperts; ++e) in.probs[n * kExperts + e] /= sum;
  }
  in.routing = route(in.probs.data(), in.tokens, config());
  for (std::size_t c = 0; c < in.routing.expert.size(); ++c)
    in.gates.push_back(in.probs[(c / 2) * kExperts + in.routing.expert[c]]);
  return in;
}

// What an "expert" does to a row in this test: something that depends on the row and the expert.
double expert_function(double value, int expert) { return 2.0 * value + expert + 0.5; }

EXERCISE_TEST("ep.dispatch_combine", DispatchCombine, RowsReachTheirExpertsAndComeBack) {
  for (int ranks : {1, 2, 4}) {
    std::vector<RankInput> inputs;
    for (int r = 0; r < ranks; ++r) inputs.push_back(rank_input(r));
    ASSERT_GT(inputs[0].routing.dropped, 0) << "the test wants some dropped choices";
    coll::run_ranks(ranks, [&](coll::Communicator& comm) {
      const int r = comm.rank();
      const ExpertPlacement placement{kExperts, ranks, r};
      const int per_rank = placement.per_rank();
      SCOPED_TRACE("rank " + std::to_string(r) + " of " + std::to_string(ranks));
      const RankInput& in = inputs[r];
      // The rows this rank must receive: for each source, for each of its experts, in slot order.
      std::vector<double> want;
      std::size_t from_others = 0;
      for (int s = 0; s < ranks; ++s)
        for (int e = placement.first(); e < placement.first() + per_rank; ++e)
          for (int slot = 0; slot < inputs[s].routing.load[e]; ++slot)
            for (std::size_t c = 0; c < inputs[s].routing.slot.size(); ++c)
              if (inputs[s].routing.expert[c] == e && inputs[s].routing.slot[c] == slot) {
                const double* row = inputs[s].x.data() + (c / 2) * kChannels;
                want.insert(want.end(), row, row + kChannels);
                if (s != r) ++from_others;
              }
      std::size_t to_others = 0;
      for (int e = 0; e < kExperts; ++e)
        if (placement.owner(e) != r) to_others += in.routing.load[e];

      DispatchPlan plan;
      std::vector<double> received(3, kNaN);
      comm.reset_counters();
      dispatch(in.x.data(), kChannels, in.routing, placement, comm, plan, received);
      expect_close("the rows this rank's experts received", want, received, 0.0);
      EXPECT_EQ(plan.rows_sent(), static_cast<std::size_t>(in.routing.kept()));
      EXPECT_EQ(plan.rows_received() * kChannels, want.size());
      EXPECT_EQ(comm.counters().bytes_sent,
                (ranks - 1) * per_rank * sizeof(double) + to_others * kChannels * sizeof(double))
          << "the counts, then the rows routed to other ranks";

      // The experts: each received row through its expert's function, in the same order.
      std::vector<double> out(received.size());
      std::size_t row = 0;
      for (int s = 0; s < ranks; ++s)
        for (int j = 0; j < per_rank; ++j)
          for (std::size_t i = 0; i < plan.recv_per_expert[s * per_rank + j]; ++i, ++row)
            for (int c = 0; c < kChannels; ++c)
              out[row * kChannels + c] =
                  expert_function(received[row * kChannels + c], placement.first() + j);
      ASSERT_EQ(row, plan.rows_received());
      std::vector<double> y = random_vector(in.x.size(), 300 + r);  // combine adds into y
      std::vector<double> y_want = y;
      for (std::size_t c = 0; c < in.routing.slot.size(); ++c) {
        if (in.routing.slot[c] < 0) continue;  // dropped: nothing comes back
        for (int k = 0; k < kChannels; ++k)
          y_want[(c / 2) * kChannels + k] +=
              in.gates[c] * expert_function(in.x[(c / 2) * kChannels + k], in.routing.expert[c]);
      }
      std::vector<double> returned;
      comm.reset_counters();
      combine(out.data(), kChannels, in.routing, in.gates.data(), plan, comm, returned, y.data());
      expect_close("y after the combine", y_want, y, 1e-14);
      EXPECT_EQ(returned.size(), static_cast<std::size_t>(in.routing.kept()) * kChannels);
      EXPECT_EQ(comm.counters().bytes_sent, from_others * kChannels * sizeof(double))
          << "the way back: what came from other ranks returns to them";
    });
  }
}

// A routing over 8 experts dispatched with ExpertPlacement{4, 2, r}: owner(e) gave ranks 2 and 3
// for experts 4-7 and dispatch wrote past the end of send_rows (2 entries). Refused on every rank
// before any all-to-all, as is a placement that is not the group's.
EXERCISE_TEST("ep.dispatch_combine", DispatchCombine, RefusesAPlacementThatDoesNotFit) {
  MoeConfig eight = config();
  eight.experts = 8;
  const std::vector<double> probs(3 * 8, 0.125), x(3 * kChannels, 1.0);
  const Routing routing = route(probs.data(), 3, eight);
  coll::run_ranks(2, [&](coll::Communicator& comm) {
    DispatchPlan plan;
    std::vector<double> received;
    book::testing::expect_error(
        [&] {
          dispatch(x.data(), kChannels, routing, {4, 2, comm.rank()}, comm, plan, received);
        },
        {"spreads 4 experts", "among 8"});
    book::testing::expect_error(
        [&] {
          dispatch(x.data(), kChannels, routing, {8, 4, comm.rank()}, comm, plan, received);
        },
        {"placement is rank " + std::to_string(comm.rank()) + " of 4", "of 2"});
  });
}

}  // namespace
}  // namespace book::ep
