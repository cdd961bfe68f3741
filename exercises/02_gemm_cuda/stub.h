// The body of a map function you have not written yet: on the CPU it throws the exercise's
// not-started error (the tests read it as "not started"); on the GPU it stops the kernel.
#pragma once

#include "common/check.h"

#if defined(__CUDA_ARCH__)
#define BOOK_MAP_STUB(id, file) __trap()
#else
#define BOOK_MAP_STUB(id, file) \
  BOOK_NOT_IMPLEMENTED(id, file, "chapters/02_gemm_cuda/README.md, section " id)
#endif
