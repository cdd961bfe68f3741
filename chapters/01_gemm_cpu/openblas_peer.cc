#include "chapters/01_gemm_cpu/openblas_peer.h"

#include <cblas.h>
#include <dlfcn.h>

#include "common/check.h"

namespace book::gemm {
namespace {

// BLIS (the bench's other peer) exports cblas_sgemm too, and the dynamic linker binds the name to
// whichever library it loaded first. So look cblas_sgemm up inside the library that defines
// openblas_get_corename, a symbol only OpenBLAS has.
using CblasSgemm = decltype(&cblas_sgemm);

CblasSgemm openblas_cblas_sgemm() {
  static const CblasSgemm resolved = [] {
    Dl_info info{};
    BOOK_CHECK(dladdr(reinterpret_cast<void*>(&openblas_get_corename), &info) != 0,
               "cannot find the library that defines openblas_get_corename");
    void* handle = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
    BOOK_CHECK(handle != nullptr, "cannot reopen " << info.dli_fname << ": " << dlerror());
    auto fn = reinterpret_cast<CblasSgemm>(dlsym(handle, "cblas_sgemm"));
    BOOK_CHECK(fn != nullptr, info.dli_fname << " has no cblas_sgemm");
    return fn;
  }();
  return resolved;
}

}  // namespace

void openblas_matmul(int m, int n, int k, const float* a, int lda, const float* b, int ldb,
                     float* c, int ldc) {
  openblas_cblas_sgemm()(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, lda, b, ldb,
                         0.0f, c, ldc);
}

void openblas_set_threads(int threads) { openblas_set_num_threads(threads); }

std::string openblas_core_name() { return openblas_get_corename(); }

std::string openblas_cblas_library() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(openblas_cblas_sgemm()), &info) == 0 || !info.dli_fname)
    return "unknown";
  return info.dli_fname;
}

}  // namespace book::gemm
