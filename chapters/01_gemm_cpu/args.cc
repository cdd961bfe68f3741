#include "chapters/01_gemm_cpu/args.h"

#include <cmath>

#include "common/check.h"

namespace book::gemm {

void check_gemm_args(const char* who, int m, int n, int k, const float* a, int lda, int a_row,
                     const float* b, int ldb, int b_row, const float* c, int ldc) {
  BOOK_CHECK(m > 0 && n > 0 && k > 0, who << ": sizes must be positive, got m=" << m << " n=" << n
                                          << " k=" << k << " (C is m×n, the inner dimension is k)");
  BOOK_CHECK(a != nullptr, who << ": A is null but m×k = " << m << "×" << k);
  BOOK_CHECK(b != nullptr, who << ": B is null but k×n = " << k << "×" << n);
  BOOK_CHECK(c != nullptr, who << ": C is null but m×n = " << m << "×" << n);
  BOOK_CHECK(lda >= a_row, who << ": lda=" << lda << " is shorter than a stored row of A (" << a_row
                               << " elements); lda must be >= " << a_row);
  BOOK_CHECK(ldb >= b_row, who << ": ldb=" << ldb << " is shorter than a stored row of B (" << b_row
                               << " elements); ldb must be >= " << b_row);
  BOOK_CHECK(ldc >= n, who << ": ldc=" << ldc << " is shorter than a row of C (n=" << n
                           << "); ldc must be >= " << n);
}

bool close_to(std::span<const float> c, std::span<const float> ref, int k) {
  if (c.size() != ref.size()) return false;
  const double tolerance = (k + 4) * std::ldexp(1.0, -23) * k;
  for (std::size_t i = 0; i < c.size(); ++i)
    if (!(std::abs(static_cast<double>(c[i]) - ref[i]) <= tolerance)) return false;
  return true;
}

}  // namespace book::gemm
