#include "common/track.h"

namespace book {

// BOOK_EXERCISE_TRACK is defined for this file only, by //common:track's select on
// //tools:exercises_track (what --config=exercises sets).
bool exercise_track() {
#ifdef BOOK_EXERCISE_TRACK
  return true;
#else
  return false;
#endif
}

std::string track_name() { return exercise_track() ? "exercises" : "solutions"; }

}  // namespace book
