// A shared library that tools/gpu/run_test.sh's fake pack leaves out, so that the preflight has
// a missing library to report (and, when BOOK_LIB_PATH points at it, one to find).
extern "C" int book_gpu_fake_library_answer() { return 42; }
