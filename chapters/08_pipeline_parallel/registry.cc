// The schedules by name.
#include "chapters/08_pipeline_parallel/registry.h"

#include <algorithm>
#include <sstream>

#include "chapters/08_pipeline_parallel/schedules.h"
#include "common/check.h"

namespace book::pp {

const std::vector<std::string>& schedule_names() {
  static const std::vector<std::string> names = {"gpipe", "1f1b", "interleaved", "zb-h1"};
  return names;
}

Schedule make_schedule(std::string_view name, const Shape& shape) {
  const auto& names = schedule_names();
  std::ostringstream valid;
  for (const auto& n : names) valid << " " << n;
  BOOK_CHECK(std::find(names.begin(), names.end(), name) != names.end(),
             "unknown schedule '" << name << "' (valid:" << valid.str() << ")");
  if (name == "gpipe") return gpipe_schedule(shape);
  if (name == "1f1b") return one_f_one_b_schedule(shape);
  if (name == "interleaved") return interleaved_schedule(shape);
  return zero_bubble_schedule(shape);
}

}  // namespace book::pp
