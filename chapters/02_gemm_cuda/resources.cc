#include "chapters/02_gemm_cuda/resources.h"

#include <cstdlib>
#include <filesystem>
#include <regex>

namespace book::gemm_cuda {

std::vector<KernelResources> parse_ptxas_report(std::istream& report) {
  static const std::regex entry(R"(Compiling entry function '(.*)' for '(sm_\w+)')");
  static const std::regex frame(
      R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex used(R"(Used (\d+) registers)");
  static const std::regex smem(R"((\d+) bytes smem)");
  std::vector<KernelResources> out;
  std::string line;
  std::smatch m;
  while (std::getline(report, line)) {
    if (std::regex_search(line, m, entry)) {
      out.push_back({m[1], m[2]});
    } else if (out.empty()) {
      continue;
    } else if (std::regex_search(line, m, frame)) {
      out.back().stack_bytes = std::stoi(m[1]);
      out.back().spill_stores = std::stoi(m[2]);
      out.back().spill_loads = std::stoi(m[3]);
    } else if (std::regex_search(line, m, used)) {
      out.back().registers = std::stoi(m[1]);
      if (std::regex_search(line, m, smem)) out.back().static_smem = std::stoi(m[1]);
    }
  }
  return out;
}

std::string short_kernel_name(const std::string& demangled) {
  // Find the '(' that opens the parameter list: the first one at template depth 0.
  int depth = 0;
  std::size_t open = demangled.size();
  for (std::size_t i = 0; i < demangled.size(); ++i) {
    const char ch = demangled[i];
    if (ch == '<') ++depth;
    if (ch == '>') --depth;
    if (ch == '(' && depth == 0 && demangled.compare(i, 21, "(anonymous namespace)") != 0) {
      open = i;
      break;
    }
  }
  std::string head = demangled.substr(0, open);
  const std::size_t colons = head.rfind("::", head.find('<'));
  if (colons != std::string::npos) head = head.substr(colons + 2);
  if (head.rfind("void ", 0) == 0) head = head.substr(5);
  return head;
}

std::string find_resource_report(const std::string& argv0) {
  namespace fs = std::filesystem;
  const char* name = "resource_report.txt";
  std::vector<fs::path> candidates;
  if (const char* env = std::getenv("BOOK_RESOURCE_REPORT"); env && *env) candidates.push_back(env);
  candidates.push_back(fs::path("chapters/02_gemm_cuda") / name);  // bazel run: cwd = runfiles
  candidates.push_back(fs::path(argv0 + ".runfiles/llm_infra_book/chapters/02_gemm_cuda") / name);
  candidates.push_back(fs::path(argv0).parent_path() / name);
  candidates.push_back(fs::path(argv0).parent_path() / "ladder_data" / name);
  for (const fs::path& p : candidates) {
    std::error_code error;
    if (fs::is_regular_file(p, error)) return p.string();
  }
  return "";
}

}  // namespace book::gemm_cuda
