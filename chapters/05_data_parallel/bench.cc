// bazel run -c opt //chapters/05_data_parallel:bench [-- --rounds 5] [-- --benchmark_filter=...]
//
// Our data-parallel step against PyTorch DDP's, same model, batch and N = 2, in the same run:
// 1. Google Benchmark: one step of every rung on 2 thread ranks (tokens/s);
// 2. the peer comparison, in interleaved rounds: ours on 2 thread ranks, ours as 2 MPI processes
//    (mpirun + this chapter's ddp stage), and PyTorch DDP (gloo, 2 processes; Debian's
//    python3-torch run by /usr/bin/python3 with torch_ddp_peer.py). Both sides: the stage's model
//    (4 layers, d_model 128), 16 sequences x 2 micro-batches, no-sync accumulation, 256 KiB
//    buckets, one core per rank. A peer that cannot run is reported with the reason; ours is
//    printed anyway.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "chapters/01_gemm_cpu/sgemm.h"
#include "chapters/03_collectives/lockstep_benchmark.h"
#include "chapters/03_collectives/threads.h"
#include "chapters/05_data_parallel/ddp_trainer.h"
#include "chapters/05_data_parallel/stage.h"
#include "common/benchmark_flags.h"
#include "common/flags.h"
#include "common/main.h"
#include "common/peers.h"
#include "common/table.h"

namespace {

using namespace book::ddp;
namespace fs = std::filesystem;

constexpr int kSteps = 12, kWarmup = 2;

stage::StageOptions bench_stage() { return stage::StageOptions{}; }  // the stage's defaults

// One step of `rung` on N thread ranks per iteration, the ranks in lockstep
// (chapter 3's lockstep_benchmark).
void BM_DdpStep(benchmark::State& state) {
  const auto rung = static_cast<Rung>(state.range(0));
  const int ranks = static_cast<int>(state.range(1));
  const book::gemm::SgemmThreads one_thread(1);
  std::int64_t tokens = 0;
  book::coll::run_ranks(ranks, [&](book::coll::Communicator& comm) {
    DdpTrainer trainer(comm, stage::run_options(bench_stage(), rung));
    tokens = trainer.tokens_per_step();
    book::coll::lockstep_benchmark(state, comm, [&] { trainer.step(); });
  });
  state.SetLabel(std::string(rung_name(rung)) + ", N=" + std::to_string(ranks) + " threads");
  state.counters["tokens/s"] =
      benchmark::Counter(static_cast<double>(tokens) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
}
BENCHMARK(BM_DdpStep)
    ->ArgsProduct({{1, 2, 3, 4}, {2}})
    ->ArgNames({"rung", "ranks"})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

// Runs `command`, returns its standard output (and error) and whether it exited with 0.
std::pair<std::string, bool> run(const std::string& command) {
  std::string out;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return {"could not start: " + command, false};
  std::array<char, 4096> buffer{};
  while (std::fgets(buffer.data(), buffer.size(), pipe)) out += buffer.data();
  return {out, pclose(pipe) == 0};
}

std::string last_lines(const std::string& text, int lines = 3) {
  std::size_t at = text.size();
  for (int i = 0; i < lines && at != std::string::npos && at > 0; ++i)
    at = text.rfind('\n', at - 1);
  return text.substr(at == std::string::npos ? 0 : at + 1);
}

// A file next to this binary in its runfiles (bazel run) or the source tree (run from the root).
std::optional<fs::path> find_data(const std::string& argv0, const std::string& name) {
  for (const fs::path& p :
       {fs::path("chapters/05_data_parallel") / name,
        fs::path(argv0 + ".runfiles/llm_infra_book/chapters/05_data_parallel") / name})
    if (fs::exists(p)) return fs::absolute(p);
  return std::nullopt;
}

// One measurement of one implementation: ms per step (median of kSteps), or why it failed.
struct Measurement {
  std::optional<double> ms;
  std::string why;
};

Measurement ours_threads() {
  std::vector<double> times;
  const book::gemm::SgemmThreads one_thread(1);
  book::coll::run_ranks(2, [&](book::coll::Communicator& comm) {
    DdpTrainer trainer(comm, stage::run_options(bench_stage(), Rung::kNoSync));
    for (int s = 0; s < kWarmup + kSteps; ++s) {
      trainer.step();
      if (comm.rank() == 0 && s >= kWarmup) times.push_back(trainer.last_times().step);
    }
  });
  std::sort(times.begin(), times.end());
  return {1e3 * times[times.size() / 2], ""};
}

Measurement ours_mpi(const std::optional<fs::path>& ddp) {
  if (!ddp) return {std::nullopt, "the ddp stage binary is not next to the bench"};
  if (!run("command -v mpirun").second) return {std::nullopt, "mpirun not found (openmpi-bin)"};
  const auto [out, ok] =
      run("OMPI_MCA_btl_vader_single_copy_mechanism=none mpirun -np 2 --oversubscribe "
          "--allow-run-as-root " +
          ddp->string() + " --backend mpi --rungs no-sync --steps " + std::to_string(kSteps) +
          " --warmup " + std::to_string(kWarmup));
  std::smatch m;
  const std::regex line(R"(rung no-sync, N=2: ([0-9.]+) ms/step)");
  if (!ok || !std::regex_search(out, m, line))
    return {std::nullopt, "mpirun failed: " + last_lines(out)};
  return {std::stod(m[1]), ""};
}

// What the PyTorch peer reported of its kernels and threads (its JSON line's "configuration").
std::string pytorch_configuration = "not reported";

Measurement pytorch(const std::optional<fs::path>& script) {
  if (!script) return {std::nullopt, "torch_ddp_peer.py is not next to the bench"};
  if (!fs::exists("/usr/bin/python3")) return {std::nullopt, "/usr/bin/python3 not found"};
  const stage::StageOptions o = bench_stage();
  const auto [out, ok] =
      // One BLAS thread per rank process (its pool would start one per core in each); the
      // OpenBLAS core and ATen ISA come from this process's environment (common/peers.h).
      run("OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 /usr/bin/python3 " + script->string() +
          " --ranks 2 --layers " + std::to_string(o.layers) + " --d-model " +
          std::to_string(o.d_model) + " --heads " + std::to_string(o.heads) + " --digits " +
          std::to_string(o.digits) + " --micro-batch " + std::to_string(o.micro_batch) +
          " --accumulation " + std::to_string(o.accumulation) + " --steps " +
          std::to_string(kSteps) + " --warmup " + std::to_string(kWarmup) + " --bucket-mb " +
          std::to_string(static_cast<double>(o.bucket_kib) / 1024));
  std::smatch m;
  const std::regex json(R"("ms_per_step": ([0-9.eE+-]+))");
  if (!ok || !std::regex_search(out, m, json)) {
    const bool no_torch = out.find("No module named 'torch'") != std::string::npos;
    return {std::nullopt, no_torch ? "Debian's python3-torch is not installed (tools/setup.sh)"
                                   : "PyTorch DDP failed: " + last_lines(out)};
  }
  std::smatch config;
  if (std::regex_search(out, config, std::regex(R"re("configuration": "([^"]*)")re")))
    pytorch_configuration = config[1];
  return {std::stod(m[1]), ""};
}

void compare_with_pytorch(const std::string& argv0, int rounds) {
  const auto ddp = find_data(argv0, "ddp");
  const auto script = find_data(argv0, "torch_ddp_peer.py");
  const char* names[] = {"ours, 2 thread ranks", "ours, 2 MPI processes",
                         "PyTorch DDP 1.13, gloo, 2 processes"};
  std::vector<std::vector<double>> ms(3);
  std::vector<std::string> why(3);
  const double tokens = 16.0 * 2 * 8;  // the stage's step: 16 sequences x 2 micro-batches x 8
  for (int round = 1; round <= rounds; ++round) {  // interleaved: the load hits every side alike
    std::cout << "bench: round " << round << " of " << rounds << "\n";
    const Measurement m[] = {ours_threads(), ours_mpi(ddp), pytorch(script)};
    for (int i = 0; i < 3; ++i) {
      if (m[i].ms)
        ms[i].push_back(*m[i].ms);
      else
        why[i] = m[i].why;
    }
  }
  book::Table table({"implementation", "ms/step (median of rounds)", "min-max", "tokens/s",
                     "tokens/s vs PyTorch DDP"});
  std::vector<double> median(3, 0);
  for (int i = 0; i < 3; ++i) {
    if (ms[i].empty()) continue;
    std::sort(ms[i].begin(), ms[i].end());
    median[i] = ms[i][ms[i].size() / 2];
  }
  for (int i = 0; i < 3; ++i) {
    if (ms[i].empty()) {
      table.add_row({names[i], "-", "-", "-", "did not run: " + why[i]});
      continue;
    }
    table.add_row(
        {names[i], book::fixed(median[i], 1),
         book::fixed(ms[i].front(), 1) + "-" + book::fixed(ms[i].back(), 1),
         book::fixed(tokens / (median[i] / 1e3), 0),
         median[2] > 0 ? book::peers::ratio_against(median[2] / median[i], "PyTorch DDP") : "-"});
  }
  std::cout << "\n## Our DDP step against PyTorch DDP (N = 2, no-sync, 16 x 2 sequences, "
               "256 KiB buckets, one core per rank)\n\n"
            << table.markdown()
            << "\nPyTorch DDP's configuration, per process: " << pytorch_configuration << " ("
            << book::peers::openblas_description()
            << " in this process, whose environment it inherits)\n";
  const std::string warning = book::peers::not_at_best_warning();
  if (!warning.empty()) std::cout << "WARNING: " << warning << ": the ratios are not results\n";
}

// --rounds N (or --rounds=N), from 1 to 100: a bad value is a usage error, not a silent 1.
int parse_rounds(const std::string& text) {
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size())
    throw book::UsageError("--rounds expects an integer, got '" + text + "'");
  if (value < 1 || value > 100) throw book::UsageError("--rounds must be in 1..100, got " + text);
  return value;
}

int body(int argc, char** argv) {
  int rounds = 5;
  std::vector<char*> rest = {argv[0]};
  for (int i = 1; i < argc; ++i) {  // --rounds N is ours; the rest is Google Benchmark's
    const std::string arg = argv[i];
    if (arg == "--rounds") {
      if (i + 1 == argc) throw book::UsageError("--rounds expects an integer, got nothing");
      rounds = parse_rounds(argv[++i]);
    } else if (arg.rfind("--rounds=", 0) == 0) {
      rounds = parse_rounds(arg.substr(9));
    } else {
      rest.push_back(argv[i]);
    }
  }
  int count = static_cast<int>(rest.size());
  book::init_benchmark(&count, rest.data());  // refuses unknown flags; prints the machine's load
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  compare_with_pytorch(argv[0], rounds);
  return 0;
}

}  // namespace

// This bench loads OpenBLAS only so that use_peers_at_their_best() chooses its core here, where
// the PyTorch processes it starts inherit the choice.
extern "C" char* openblas_get_corename(void);
void* volatile keep_openblas_linked = reinterpret_cast<void*>(&openblas_get_corename);

int main(int argc, char** argv) {
  book::peers::use_peers_at_their_best(argc, argv);
  return book::run_main(argc, argv, body);
}
