// Reference bodies of pp.one_f_one_b_schedule, pp.interleaved_schedule, pp.zero_bubble_schedule.
#include "chapters/08_pipeline_parallel/schedules.h"

#include <algorithm>

#include "common/check.h"

namespace book::pp {

//! [one_f_one_b]
Schedule one_f_one_b_schedule(const Shape& shape) {
  check_shape(shape, "one_f_one_b_schedule");
  BOOK_CHECK(shape.chunks == 1, "one_f_one_b_schedule: 1F1B has one chunk per rank, got v = "
                                    << shape.chunks << "; use interleaved_schedule");
  const int p = shape.stages, m = shape.micro_batches;
  Schedule s{"1f1b", shape, false, std::vector<std::vector<Action>>(p)};
  for (int r = 0; r < p; ++r) {
    auto& out = s.ranks[r];
    const int warm_up = std::min(p - 1 - r, m);
    for (int mb = 0; mb < warm_up; ++mb) out.push_back({Op::kForward, mb, 0});
    for (int i = 0; i < m - warm_up; ++i) {  // steady state: one forward, one backward
      out.push_back({Op::kForward, warm_up + i, 0});
      out.push_back({Op::kBackward, i, 0});
    }
    for (int mb = m - warm_up; mb < m; ++mb) out.push_back({Op::kBackward, mb, 0});
  }
  return s;
}
//! [one_f_one_b]

//! [interleaved]
Schedule interleaved_schedule(const Shape& shape) {
  check_shape(shape, "interleaved_schedule");
  const int p = shape.stages, m = shape.micro_batches, v = shape.chunks;
  BOOK_CHECK(m % p == 0, "interleaved_schedule: m = " << m
                                                      << " micro-batches is not a multiple "
                                                         "of p = "
                                                      << p
                                                      << " stages (the micro-batches go round the "
                                                         "ranks in groups of p); use m = "
                                                      << (m / p + 1) * p);
  Schedule s{"interleaved", shape, false, std::vector<std::vector<Action>>(p)};
  const int slots = m * v;
  auto micro_batch = [&](int k) { return (k / (p * v)) * p + k % p; };
  auto forward = [&](int k) { return Action{Op::kForward, micro_batch(k), (k / p) % v}; };
  auto backward = [&](int k) { return Action{Op::kBackward, micro_batch(k), v - 1 - (k / p) % v}; };
  for (int r = 0; r < p; ++r) {
    auto& out = s.ranks[r];
    const int warm_up = std::min((p - r - 1) * 2 + (v - 1) * p, slots);
    int next_backward = 0;
    for (int k = 0; k < warm_up; ++k) out.push_back(forward(k));
    for (int k = warm_up; k < slots; ++k) {
      out.push_back(forward(k));
      out.push_back(backward(next_backward++));
    }
    while (next_backward < slots) out.push_back(backward(next_backward++));
  }
  return s;
}
//! [interleaved]

//! [zero_bubble]
Schedule zero_bubble_schedule(const Shape& shape) {
  check_shape(shape, "zero_bubble_schedule");
  const int p = shape.stages, m = shape.micro_batches;
  BOOK_CHECK(shape.chunks == 1,
             "zero_bubble_schedule: ZB-H1 has one chunk per rank, got v = " << shape.chunks);
  BOOK_CHECK(m >= p, "zero_bubble_schedule: m = " << m << " micro-batches is fewer than p = " << p
                                                  << " stages; ZB-H1 needs m >= p (use m = " << p
                                                  << " or more)");
  Schedule s = one_f_one_b_schedule(Shape{p, m, 1});
  s.name = "zb-h1";
  s.split_backward = true;
  for (int r = 0; r < p; ++r) {
    std::vector<Action> out;
    int backwards = 0, weights = 0;
    for (const Action& a : s.ranks[r]) {
      out.push_back(a);
      if (a.op != Op::kBackward) continue;
      ++backwards;
      // Rank r keeps r weight gradients waiting: W runs once r + 1 B's are ahead of it.
      if (backwards - weights > r) out.push_back({Op::kWeight, weights++, 0});
    }
    while (weights < m) out.push_back({Op::kWeight, weights++, 0});
    s.ranks[r] = std::move(out);
  }
  return s;
}
//! [zero_bubble]

}  // namespace book::pp
