// Schedules as data: names, checks, GPipe and the lookup by name.
#include "chapters/08_pipeline_parallel/action.h"

#include <cstdint>
#include <limits>
#include <map>
#include <sstream>
#include <tuple>

#include "common/check.h"

namespace book::pp {

std::string_view op_letter(Op op) {
  switch (op) {
    case Op::kForward:
      return "F";
    case Op::kBackward:
      return "B";
    case Op::kWeight:
      return "W";
  }
  return "?";
}

std::string action_name(const Action& action, bool with_chunk) {
  std::ostringstream out;
  out << op_letter(action.op) << action.micro_batch;
  if (with_chunk) out << "." << action.chunk;
  return out.str();
}

void check_shape(const Shape& shape, std::string_view who) {
  BOOK_CHECK(shape.stages >= 1, who << ": stages must be at least 1, got " << shape.stages);
  BOOK_CHECK(shape.micro_batches >= 1,
             who << ": micro-batches must be at least 1, got " << shape.micro_batches);
  BOOK_CHECK(shape.chunks >= 1,
             who << ": chunks per rank must be at least 1, got " << shape.chunks);
  // Virtual stages are ints (p·v), and so are the indices built from them.
  const std::int64_t virtual_stages = std::int64_t{shape.stages} * shape.chunks;
  BOOK_CHECK(virtual_stages <= std::numeric_limits<int>::max(),
             who << ": stages × chunks = " << shape.stages << " × " << shape.chunks << " = "
                 << virtual_stages << " virtual stages, above " << std::numeric_limits<int>::max()
                 << "; use fewer stages or chunks");
}

void check_schedule(const Schedule& s) {
  check_shape(s.shape, "check_schedule");
  const int p = s.shape.stages, m = s.shape.micro_batches, v = s.shape.chunks;
  BOOK_CHECK(static_cast<int>(s.ranks.size()) == p,
             s.name << ": " << s.ranks.size() << " action lists for " << p << " stages");
  for (int r = 0; r < p; ++r) {
    // For each (micro-batch, chunk): how far it has got on this rank (0 none, 1 F, 2 B, 3 W).
    std::map<std::pair<int, int>, int> progress;
    for (const Action& a : s.ranks[r]) {
      const std::string what =
          s.name + ": rank " + std::to_string(r) + "'s " + action_name(a, true);
      BOOK_CHECK(a.micro_batch >= 0 && a.micro_batch < m && a.chunk >= 0 && a.chunk < v,
                 what << " is outside m = " << m << ", v = " << v);
      BOOK_CHECK(a.op != Op::kWeight || s.split_backward,
                 what << ": a W in a schedule whose B computes the weight gradient too");
      int& done = progress[{a.micro_batch, a.chunk}];
      const int step = a.op == Op::kForward ? 1 : a.op == Op::kBackward ? 2 : 3;
      BOOK_CHECK(done == step - 1, what << (done >= step ? " runs twice"
                                                         : " runs before its "
                                                           "predecessor on the "
                                                           "rank (F, B, W)"));
      done = step;
    }
    const int last = s.split_backward ? 3 : 2;
    for (int mb = 0; mb < m; ++mb)
      for (int c = 0; c < v; ++c) {
        const auto it = progress.find({mb, c});
        BOOK_CHECK(it != progress.end() && it->second == last,
                   s.name << ": rank " << r << " never finishes micro-batch " << mb << " chunk "
                          << c << " (it must run F, B" << (s.split_backward ? ", W" : "") << ")");
      }
  }
}

//! [gpipe]
Schedule gpipe_schedule(const Shape& shape) {
  check_shape(shape, "gpipe_schedule");
  BOOK_CHECK(shape.chunks == 1, "gpipe_schedule: GPipe has one chunk per rank, got v = "
                                    << shape.chunks << "; use the interleaved schedule");
  Schedule s{"gpipe", shape, false, {}};
  s.ranks.resize(shape.stages);
  for (auto& actions : s.ranks) {
    for (int mb = 0; mb < shape.micro_batches; ++mb) actions.push_back({Op::kForward, mb, 0});
    for (int mb = 0; mb < shape.micro_batches; ++mb) actions.push_back({Op::kBackward, mb, 0});
  }
  return s;
}
//! [gpipe]

}  // namespace book::pp
