/// @file
/// Which track this binary was built with: the reference solutions (the default) or the reader's
/// exercises (`--config=exercises`). Stages say so next to an answer ("the reference's" or
/// "yours"), graded tests record it in their XML so the progress tool never mistakes a reference
/// run for the reader's, and results files of the two tracks get different names.
#pragma once

#include <string>

namespace book {

/// True when built with `--config=exercises` (the chapters' track aliases link exercises/).
bool exercise_track();

/// "exercises" or "solutions".
std::string track_name();

}  // namespace book
