/// @file
/// The schedules by name, for the stage and the tests that run every schedule.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "chapters/08_pipeline_parallel/action.h"

namespace book::pp {

/// The schedules by name: "gpipe", "1f1b", "interleaved" (shape.chunks ≥ 1), "zb-h1". An unknown
/// name is a book::Error listing the valid ones.
Schedule make_schedule(std::string_view name, const Shape& shape);
/// The valid names, in the order above.
const std::vector<std::string>& schedule_names();

}  // namespace book::pp
