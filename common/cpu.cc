#include "common/cpu.h"

#include <fstream>

namespace book {

std::string isa_name(Isa isa) {
  switch (isa) {
    case Isa::kSse:
      return "SSE";
    case Isa::kAvx:
      return "AVX";
    case Isa::kAvx2:
      return "AVX2";
    case Isa::kAvx512:
      return "AVX-512";
  }
  return "?";
}

Isa cpu_isa() {
  static const Isa isa = [] {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
      return Isa::kAvx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Isa::kAvx2;
    if (__builtin_cpu_supports("avx")) return Isa::kAvx;
    return Isa::kSse;
  }();
  return isa;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos && colon + 2 <= line.size()) return line.substr(colon + 2);
    }
  return "unknown";
}

}  // namespace book
