// Graded tests of pp.one_f_one_b_schedule, pp.interleaved_schedule and pp.zero_bubble_schedule:
// the lists are well formed (check_schedule), run without deadlock in the simulator, give the
// textbook bubble with unit costs — (p−1)/(m+p−1) for 1F1B, (p−1)/(v·m+p−1) interleaved, a third
// of 1F1B's idle time for ZB-H1 — hold at most p micro-batches' activations (GPipe: m), and
// refuse shapes they cannot run with a message that names the values.
#include <string>
#include <vector>

#include "chapters/08_pipeline_parallel/schedules.h"
#include "chapters/08_pipeline_parallel/simulator.h"
#include "common/testing/exercise.h"
#include "common/testing/expect_error.h"

namespace book::pp {
namespace {

std::string describe(const Shape& s) {
  return "p = " + std::to_string(s.stages) + ", m = " + std::to_string(s.micro_batches) +
         ", v = " + std::to_string(s.chunks);
}

// In the simulated timeline every action starts after its dependency ended, and a rank runs
// one action at a time in list order.
void expect_dependencies_respected(const Schedule& schedule, const Timeline& t) {
  std::vector<std::vector<double>> ends;
  for (int r = 0; r < schedule.shape.stages; ++r) {
    ASSERT_EQ(t.ranks[r].size(), schedule.ranks[r].size());
    for (std::size_t i = 0; i < t.ranks[r].size(); ++i) {
      EXPECT_EQ(t.ranks[r][i].action, schedule.ranks[r][i]);
      if (i > 0) {
        EXPECT_GE(t.ranks[r][i].start, t.ranks[r][i - 1].end);
      }
    }
  }
  for (int r = 0; r < schedule.shape.stages; ++r)
    for (const TimedAction& a : t.ranks[r]) {
      const auto dep = dependency_of(schedule.shape, r, a.action);
      if (!dep) continue;
      bool found = false;
      for (int q = 0; q < schedule.shape.stages; ++q)
        for (const TimedAction& b : t.ranks[q])
          if (key_of(schedule.shape, q, b.action) == *dep) {
            found = true;
            EXPECT_LE(b.end, a.start) << "rank " << r << "'s " << action_name(a.action, true);
          }
      EXPECT_TRUE(found) << action_name(a.action, true) << "'s dependency never ran";
    }
}

EXERCISE_TEST("pp.one_f_one_b_schedule", OneFOneB, BubbleEqualsGPipesAndTheFormula) {
  for (int p : {1, 2, 3, 4, 5})
    for (int m : {1, 2, p, p + 1, 2 * p + 3}) {
      const Shape shape{p, m, 1};
      SCOPED_TRACE(describe(shape));
      const Schedule s = one_f_one_b_schedule(shape);
      EXPECT_NO_THROW(check_schedule(s));
      EXPECT_FALSE(s.split_backward);
      const Timeline t = simulate(s, Costs{1, 1, 0, 0});
      expect_dependencies_respected(s, t);
      EXPECT_NEAR(t.bubble_fraction(), bubble_formula(shape), 1e-12);
      EXPECT_DOUBLE_EQ(t.makespan, simulate(gpipe_schedule(shape), Costs{1, 1, 0, 0}).makespan)
          << "1F1B reorders the work; it does not shorten the step";
      // Unequal costs: B twice F (the usual), still GPipe's makespan.
      EXPECT_DOUBLE_EQ(simulate(s, Costs{1, 2, 0, 0}).makespan,
                       simulate(gpipe_schedule(shape), Costs{1, 2, 0, 0}).makespan);
    }
}

EXERCISE_TEST("pp.one_f_one_b_schedule", OneFOneB, HoldsAtMostPActivationsGPipeHoldsM) {
  for (int p : {2, 4})
    for (int m : {p, 8, 16}) {
      SCOPED_TRACE(describe({p, m, 1}));
      const std::vector<int> ours = peak_in_flight(one_f_one_b_schedule({p, m, 1}));
      const std::vector<int> gpipe = peak_in_flight(gpipe_schedule({p, m, 1}));
      for (int r = 0; r < p; ++r) {
        EXPECT_EQ(ours[r], std::min(p - r, m)) << "rank " << r;
        EXPECT_EQ(gpipe[r], m) << "rank " << r;
      }
    }
}

EXERCISE_TEST("pp.one_f_one_b_schedule", OneFOneB, RefusesChunks) {
  testing::expect_error([] { one_f_one_b_schedule({2, 4, 2}); }, {"v = 2", "interleaved"});
  testing::expect_error(
      [] {
        one_f_one_b_schedule({0, 4, 1});
      },
      "stages must be at least 1, got 0");
  testing::expect_error(
      [] {
        one_f_one_b_schedule({2, 0, 1});
      },
      "micro-batches must be at least 1");
}

EXERCISE_TEST("pp.interleaved_schedule", Interleaved, BubbleShrinksByV) {
  for (int p : {2, 3, 4})
    for (int v : {1, 2, 3})
      for (int m : {p, 2 * p, 3 * p}) {
        const Shape shape{p, m, v};
        SCOPED_TRACE(describe(shape));
        const Schedule s = interleaved_schedule(shape);
        EXPECT_NO_THROW(check_schedule(s));
        const Timeline t = simulate(s, Costs{1, 1, 0, 0});
        expect_dependencies_respected(s, t);
        EXPECT_NEAR(t.bubble_fraction(), bubble_formula(shape), 1e-12)
            << "want (p-1)/(v*m+p-1) = " << bubble_formula(shape);
        // The price: v times the boundaries, so v times the messages of 1F1B (minus one edge).
        EXPECT_EQ(boundary_messages(shape), 2LL * m * (p * v - 1));
        // Each rank holds more in flight than 1F1B's p − r, but at most its warm-up + 1.
        const std::vector<int> peaks = peak_in_flight(s);
        for (int r = 0; r < p; ++r)
          EXPECT_EQ(peaks[r], std::min((p - r - 1) * 2 + (v - 1) * p + 1, m * v)) << "rank " << r;
      }
}

EXERCISE_TEST("pp.interleaved_schedule", Interleaved, RefusesMicroBatchesThatAreNotAMultipleOfP) {
  testing::expect_error(
      [] {
        interleaved_schedule({4, 6, 2});
      },
      {"m = 6", "not a multiple of p = 4", "m = 8"});
  testing::expect_error(
      [] {
        interleaved_schedule({2, 4, 0});
      },
      "chunks per rank must be at least 1");
}

EXERCISE_TEST("pp.zero_bubble_schedule", ZeroBubble, IdleIsAThirdOfOneFOneBs) {
  for (int p : {2, 3, 4, 8})
    for (int m : {p, p + 1, 2 * p, 3 * p + 1}) {
      const Shape shape{p, m, 1};
      SCOPED_TRACE(describe(shape));
      const Schedule zb = zero_bubble_schedule(shape);
      EXPECT_TRUE(zb.split_backward);
      EXPECT_NO_THROW(check_schedule(zb));
      const Costs unit{1, 1, 1, 0};  // F = B = W
      const Timeline z = simulate(zb, unit);
      expect_dependencies_respected(zb, z);
      const Timeline o = simulate(gpipe_schedule(shape), unit);  // = 1F1B's, B and W fused
      for (int r = 0; r < p; ++r) {
        EXPECT_DOUBLE_EQ(o.idle(r), 3.0 * (p - 1)) << "1F1B: (p-1)(F+B+W), rank " << r;
        EXPECT_DOUBLE_EQ(z.idle(r), 1.0 * (p - 1)) << "ZB-H1: (p-1)(F+B-W), rank " << r;
      }
      const std::vector<int> peaks = peak_in_flight(zb);
      for (int r = 0; r < p; ++r) EXPECT_LE(peaks[r], p) << "rank " << r << ": 1F1B's memory";
    }
}

EXERCISE_TEST("pp.zero_bubble_schedule", ZeroBubble, RefusesFewerMicroBatchesThanStages) {
  testing::expect_error(
      [] {
        zero_bubble_schedule({4, 3, 1});
      },
      {"m = 3", "fewer than p = 4", "m >= p"});
  testing::expect_error([] { zero_bubble_schedule({2, 4, 2}); }, "one chunk per rank, got v = 2");
}

}  // namespace
}  // namespace book::pp
