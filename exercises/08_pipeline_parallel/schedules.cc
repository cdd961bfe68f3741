// Exercises pp.one_f_one_b_schedule, pp.interleaved_schedule, pp.zero_bubble_schedule: replace
// each BOOK_NOT_IMPLEMENTED. The contracts are in chapters/08_pipeline_parallel/schedules.h; an
// action list is per rank, Action{op, micro_batch, chunk} (action.h). gpipe_schedule in
// chapters/08_pipeline_parallel/action.cc shows the shape of the answer; check_shape checks p, m,
// v. Build 1F1B first: ZB-H1 starts from it, and interleaving is 1F1B over p·v virtual stages.
#include "chapters/08_pipeline_parallel/schedules.h"

#include "common/check.h"

namespace book::pp {

Schedule one_f_one_b_schedule(const Shape& shape) {
  (void)shape;
  BOOK_NOT_IMPLEMENTED("pp.one_f_one_b_schedule", "exercises/08_pipeline_parallel/schedules.cc",
                       "chapters/08_pipeline_parallel/README.md, section 1F1B");
}

Schedule interleaved_schedule(const Shape& shape) {
  (void)shape;
  BOOK_NOT_IMPLEMENTED("pp.interleaved_schedule", "exercises/08_pipeline_parallel/schedules.cc",
                       "chapters/08_pipeline_parallel/README.md, section Interleaving");
}

Schedule zero_bubble_schedule(const Shape& shape) {
  (void)shape;
  BOOK_NOT_IMPLEMENTED("pp.zero_bubble_schedule", "exercises/08_pipeline_parallel/schedules.cc",
                       "chapters/08_pipeline_parallel/README.md, section Zero bubble");
}

}  // namespace book::pp
