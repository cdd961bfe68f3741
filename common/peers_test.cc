// Peers at their best: which cores and configurations are tried on which CPU (pure functions),
// and, by running peers_check under each setting a reader may choose, that the program really
// restarts with the chosen kernels, checks them, and says so.
#include "common/peers.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>

namespace book::peers {
namespace {

using Cores = std::vector<std::string>;

TEST(Peers, OpenBlasCoresAreRankedByTheirKernelsIsa) {
  EXPECT_EQ(openblas_core_isa("Prescott"), Isa::kSse);
  EXPECT_EQ(openblas_core_isa("Nehalem"), Isa::kSse);
  EXPECT_EQ(openblas_core_isa("Sandybridge"), Isa::kAvx);
  EXPECT_EQ(openblas_core_isa("Haswell"), Isa::kAvx2);
  EXPECT_EQ(openblas_core_isa("Zen"), Isa::kAvx2);
  EXPECT_EQ(openblas_core_isa("SkylakeX"), Isa::kAvx512);
  EXPECT_EQ(openblas_core_isa("cooperlake"), Isa::kAvx512);  // names are case-insensitive
  EXPECT_EQ(openblas_core_isa("SapphireRapids"), Isa::kAvx512);
  EXPECT_EQ(openblas_core_isa("NoSuchCore"), Isa::kSse);
}

TEST(Peers, AnAvx512CpuOnPrescottTriesSkylakeXThenHaswellThenSandybridge) {
  // Debian's OpenBLAS 0.3.21 on a Sapphire Rapids Xeon.
  EXPECT_EQ(openblas_cores_to_try(Isa::kAvx512, false, "Prescott"),
            (Cores{"SkylakeX", "Haswell", "Sandybridge"}));
  EXPECT_EQ(openblas_cores_to_try(Isa::kAvx512, true, "Prescott"),
            (Cores{"SkylakeX", "Zen", "Sandybridge"}));
  // An AVX2 choice on an AVX-512 CPU: only the better one is tried.
  EXPECT_EQ(openblas_cores_to_try(Isa::kAvx512, false, "Haswell"), (Cores{"SkylakeX"}));
}

TEST(Peers, ALibraryAlreadyOnTheCpusBestIsaIsLeftAlone) {
  EXPECT_TRUE(openblas_cores_to_try(Isa::kAvx512, true, "Cooperlake").empty());
  EXPECT_TRUE(openblas_cores_to_try(Isa::kAvx2, false, "Haswell").empty());
  EXPECT_TRUE(blis_archs_to_try(Isa::kAvx512, "skx").empty());
  EXPECT_TRUE(blis_archs_to_try(Isa::kAvx2, "zen3").empty());
  // A CPU without AVX-512 never gets AVX-512 kernels.
  EXPECT_EQ(openblas_cores_to_try(Isa::kAvx2, false, "Prescott"),
            (Cores{"Haswell", "Sandybridge"}));
}

TEST(Peers, BlisOnZen3AtAnAvx512CpuTriesSkx) {
  EXPECT_EQ(blis_arch_isa("zen3"), Isa::kAvx2);
  EXPECT_EQ(blis_arch_isa("skx"), Isa::kAvx512);
  EXPECT_EQ(blis_arch_isa("penryn"), Isa::kSse);
  EXPECT_EQ(blis_archs_to_try(Isa::kAvx512, "zen3"), (Cores{"skx"}));
  EXPECT_EQ(blis_archs_to_try(Isa::kAvx512, "generic"), (Cores{"skx", "haswell", "sandybridge"}));
}

// ---- the program, run as a reader runs it -------------------------------------------------------

// Runs peers_check with `environment` prepended; its "key: value" lines.
std::map<std::string, std::string> run_check(const std::string& environment) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  EXPECT_TRUE(srcdir && workspace) << "run this test with bazel test";
  if (!srcdir || !workspace) return {};
  const std::string binary = std::string(srcdir) + "/" + workspace + "/common/peers_check";
  // Each case starts from the library's own choices: nothing the reader's shell set leaks in.
  const std::string command =
      "env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE -u BLIS_ARCH_TYPE "
      "-u BOOK_PEERS -u BOOK_PEERS_OPENBLAS -u BOOK_PEERS_BLIS " +
      environment + " " + binary + " 2>&1";
  std::map<std::string, std::string> out;
  FILE* pipe = popen(command.c_str(), "r");
  EXPECT_NE(pipe, nullptr) << command;
  if (!pipe) return out;
  char line[4096];
  std::string all;
  while (std::fgets(line, sizeof line, pipe)) {
    std::string s(line);
    all += s;
    if (!s.empty() && s.back() == '\n') s.pop_back();
    const auto colon = s.find(": ");
    if (colon != std::string::npos) out[s.substr(0, colon)] = s.substr(colon + 2);
  }
  EXPECT_EQ(pclose(pipe), 0) << command << "\n" << all;
  out["(all)"] = all;
  return out;
}

TEST(PeersProgram, ByDefaultEveryPeerIsCheckedAndOnTheBestIsaItHasKernelsFor) {
  auto out = run_check("");
  ASSERT_TRUE(out.count("kernels OpenBLAS")) << out["(all)"];
  EXPECT_EQ(out["checked OpenBLAS"], "yes") << out["(all)"];
  EXPECT_EQ(out["checked BLIS"], "yes") << out["(all)"];
  // Both libraries have kernels for every ISA up to AVX-512 in Debian's builds.
  EXPECT_GE(openblas_core_isa(out["kernels OpenBLAS"]), std::min(cpu_isa(), Isa::kAvx512))
      << out["(all)"];
  EXPECT_EQ(out["at-best"], "yes") << out["(all)"];
}

TEST(PeersProgram, AReadersChoiceOfCoreIsUsedCheckedAndNamed) {
  // Sandybridge (AVX) runs on every CPU this book builds for (x86-64-v3).
  auto out = run_check("BOOK_PEERS_OPENBLAS=Sandybridge");
  EXPECT_EQ(out["kernels OpenBLAS"], "Sandybridge") << out["(all)"];
  EXPECT_EQ(out["checked OpenBLAS"], "yes") << out["(all)"];
  EXPECT_NE(out["openblas"].find("chosen by BOOK_PEERS_OPENBLAS"), std::string::npos)
      << out["openblas"];
  EXPECT_NE(out["openblas"].find("it chose " + out["own OpenBLAS"] + " itself"), std::string::npos)
      << out["openblas"];
}

TEST(PeersProgram, AsIsKeepsTheLibrariesOwnChoicesAndSaysSo) {
  auto out = run_check("BOOK_PEERS=as-is");
  EXPECT_EQ(out["kernels OpenBLAS"], out["own OpenBLAS"]) << out["(all)"];
  EXPECT_EQ(out["kernels BLIS"], out["own BLIS"]) << out["(all)"];
  EXPECT_NE(out["blis"].find("as-is"), std::string::npos) << out["blis"];
}

TEST(PeersProgram, ABlisConfigurationThatDoesNotExistIsRejectedNotUsed) {
  auto out = run_check("BOOK_PEERS_BLIS=nosucharch");
  EXPECT_EQ(out["kernels BLIS"], out["own BLIS"]) << out["(all)"];
  EXPECT_NE(out["blis"].find("nosucharch is not a BLIS configuration"), std::string::npos)
      << out["blis"];
}

TEST(PeersProgram, ACoreTheEnvironmentForcedIsReplacedAndNamed) {
  // What the machine the first numbers came from did: OPENBLAS_CORETYPE set in the shell.
  auto out = run_check("OPENBLAS_CORETYPE=Prescott");
  if (cpu_isa() == Isa::kSse) GTEST_SKIP() << "this CPU has nothing better than Prescott";
  EXPECT_NE(out["kernels OpenBLAS"], "Prescott") << out["(all)"];
  EXPECT_NE(out["openblas"].find("the environment asked for Prescott"), std::string::npos)
      << out["openblas"];
}

}  // namespace
}  // namespace book::peers
