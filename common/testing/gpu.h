/// @file
/// GPU tests skip, with the reason, where there is no device; they never pass silently.
#pragma once

#include <gtest/gtest.h>

#include "common/cuda.h"

/// First statement of a GPU test: skips it (with why) when no CUDA device is usable.
#define BOOK_REQUIRE_GPU()                                                                  \
  do {                                                                                      \
    if (::book::cuda::device_count() == 0)                                                  \
      GTEST_SKIP() << "needs a GPU: " << ::book::cuda::no_device_reason()                   \
                   << ". On a GPU machine run tools/gpu/run.sh (see tools/gpu/README.md)."; \
  } while (false)
