// A packed "test" that needs testdata/missing_lib.cc's shared library: run_test.sh puts it in a
// fake pack without that library. When it can run (BOOK_LIB_PATH finds the library) it behaves
// like a passing GoogleTest binary: --gtest_output=xml:PATH gets one passed test.
#include <cstdio>
#include <string>

extern "C" int book_gpu_fake_library_answer();

int main(int argc, char** argv) {
  const int answer = book_gpu_fake_library_answer();
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i], prefix = "--gtest_output=xml:";
    if (arg.rfind(prefix, 0) != 0) continue;
    if (std::FILE* xml = std::fopen(arg.substr(prefix.size()).c_str(), "w")) {
      std::fprintf(xml,
                   "<testsuites tests=\"1\" failures=\"0\" disabled=\"0\" errors=\"0\">\n"
                   "<testcase name=\"LibraryAnswers\" status=\"run\" result=\"completed\" "
                   "classname=\"FakeLibrary\"/>\n</testsuites>\n");
      std::fclose(xml);
    }
  }
  std::printf("the library answered %d\n", answer);
  return answer == 42 ? 0 : 1;
}
