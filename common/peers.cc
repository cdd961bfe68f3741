#include "common/peers.h"

#include <dlfcn.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <sstream>
#include <thread>

namespace book::peers {
namespace {

// The environment variables the program sets for itself (BOOK_PEERS_* are the reader's).
constexpr const char* kProbe = "BOOK_PEERS_PROBE";  // this process only checks, then exits
constexpr const char* kState = "BOOK_PEERS_STATE";  // the first run's findings, for the second

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// ---- the libraries, found by their symbols (the program links them; common does not) ---------

using CharFn = char* (*)();
using IntFn = int (*)();
using SetIntFn = void (*)(int);
// cblas_sgemm(order, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
using CblasSgemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*,
                            int, float, float*, int);
// BLIS 0.9's typed API with 64-bit integers (Debian's build; checked by its int-size query).
using BliSgemm = void (*)(int, int, std::int64_t, std::int64_t, std::int64_t, float*, float*,
                          std::int64_t, std::int64_t, float*, std::int64_t, std::int64_t, float*,
                          float*, std::int64_t, std::int64_t);
using BliArchString = char* (*)(int);
using BliInt = std::int64_t (*)();
using BliStr = const char* (*)();

void* any_symbol(const char* name) { return dlsym(RTLD_DEFAULT, name); }

// A symbol from the library that defines `anchor`: BLIS exports cblas_sgemm too, and the
// dynamic linker binds the bare name to whichever library loaded first.
void* symbol_beside(void* anchor, const char* name) {
  Dl_info info{};
  if (anchor == nullptr || dladdr(anchor, &info) == 0 || info.dli_fname == nullptr) return nullptr;
  void* handle = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
  return handle ? dlsym(handle, name) : nullptr;
}

bool openblas_loaded() { return any_symbol("openblas_get_corename") != nullptr; }
bool blis_loaded() { return any_symbol("bli_arch_query_id") != nullptr; }

std::string openblas_core() {
  auto fn = reinterpret_cast<CharFn>(any_symbol("openblas_get_corename"));
  return fn ? fn() : "";
}

// "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH ..." -> "0.3.21".
std::string openblas_version() {
  auto fn = reinterpret_cast<CharFn>(any_symbol("openblas_get_config"));
  if (!fn) return "?";
  std::istringstream words(fn());
  std::string name, version;
  words >> name >> version;
  return version.empty() ? "?" : version;
}

// BLIS must be initialised before its configuration is queried: with BLIS_ARCH_TYPE set, a
// query before bli_init() aborts ("Accessed uninitialized context in gks").
void blis_init() {
  using VoidFn = void (*)();
  if (auto init = reinterpret_cast<VoidFn>(any_symbol("bli_init"))) init();
}

std::string blis_arch() {
  blis_init();
  auto query = reinterpret_cast<IntFn>(any_symbol("bli_arch_query_id"));
  auto name = reinterpret_cast<BliArchString>(any_symbol("bli_arch_string"));
  return query && name ? name(query()) : "";
}

std::string blis_version() {
  auto fn = reinterpret_cast<BliStr>(any_symbol("bli_info_get_version_str"));
  return fn ? fn() : "?";
}

// BLIS_ARCH_TYPE takes the configuration's number in BLIS 0.9: find it by name.
int blis_arch_id(std::string_view arch) {
  blis_init();
  auto name = reinterpret_cast<BliArchString>(any_symbol("bli_arch_string"));
  if (!name) return -1;
  for (int id = 0; id < 64; ++id) {
    const char* s = name(id);
    if (s == nullptr) break;
    if (lower(s) == lower(arch)) return id;
  }
  return -1;
}

// ---- the check: a peer's GEMM against a double-precision reference ----------------------------

using Gemm = std::function<void(int m, int n, int k, const float* a, const float* b, float* c)>;

// Awkward shapes (a row vector, odd sizes, one past a power of two), fresh values in [-1, 1),
// the output poisoned with NaN. The bound is the classic one for a dot product of length k in
// FP32 (k·ε·Σ|a||b|), doubled for the library's blocking of the sum.
bool gemm_is_right(const Gemm& gemm, std::string* detail) {
  struct Shape {
    int m, n, k;
  };
  std::uint64_t seed = 0x9E3779B97F4A7C15ull;
  auto next = [&seed] {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<float>((seed >> 40) * (1.0 / (1ull << 24)) * 2.0 - 1.0);
  };
  for (const Shape& s :
       {Shape{1, 97, 131}, Shape{37, 53, 71}, Shape{128, 128, 128}, Shape{257, 129, 300}}) {
    std::vector<float> a(static_cast<std::size_t>(s.m) * s.k),
        b(static_cast<std::size_t>(s.k) * s.n);
    std::vector<float> c(static_cast<std::size_t>(s.m) * s.n, std::nanf(""));
    for (float& x : a) x = next();
    for (float& x : b) x = next();
    gemm(s.m, s.n, s.k, a.data(), b.data(), c.data());
    for (int i = 0; i < s.m; ++i)
      for (int j = 0; j < s.n; ++j) {
        double exact = 0, magnitude = 0;
        for (int p = 0; p < s.k; ++p) {
          const double term = double(a[std::size_t(i) * s.k + p]) * b[std::size_t(p) * s.n + j];
          exact += term;
          magnitude += std::fabs(term);
        }
        const double got = c[std::size_t(i) * s.n + j];
        const double bound = 2.0 * s.k * FLT_EPSILON * magnitude + 1e-30;
        if (!(std::fabs(got - exact) <= bound)) {
          std::ostringstream out;
          out << s.m << "x" << s.n << "x" << s.k << " C[" << i << "][" << j << "] = " << got
              << ", expected " << exact << " within " << bound;
          *detail = out.str();
          return false;
        }
      }
  }
  return true;
}

bool check_openblas(std::string* detail) {
  auto sgemm = reinterpret_cast<CblasSgemm>(
      symbol_beside(any_symbol("openblas_get_corename"), "cblas_sgemm"));
  if (!sgemm) {
    *detail = "its cblas_sgemm was not found";
    return false;
  }
  return gemm_is_right(
      [sgemm](int m, int n, int k, const float* a, const float* b, float* c) {
        constexpr int kRowMajor = 101, kNoTrans = 111;  // CBLAS's enum values
        sgemm(kRowMajor, kNoTrans, kNoTrans, m, n, k, 1.0f, a, k, b, n, 0.0f, c, n);
      },
      detail);
}

bool check_blis(std::string* detail) {
  auto sgemm = reinterpret_cast<BliSgemm>(any_symbol("bli_sgemm"));
  auto int_size = reinterpret_cast<BliInt>(any_symbol("bli_info_get_int_type_size"));
  if (!sgemm || !int_size || int_size() != 64) {
    *detail = "not a BLIS with 64-bit integers (the only kind this check calls)";
    return false;
  }
  return gemm_is_right(
      [sgemm](int m, int n, int k, const float* a, const float* b, float* c) {
        float one = 1, zero = 0;
        // Row-major operands: row stride ld, column stride 1 (BLIS_NO_TRANSPOSE is 0).
        sgemm(0, 0, m, n, k, &one, const_cast<float*>(a), k, 1, const_cast<float*>(b), n, 1, &zero,
              c, n, 1);
      },
      detail);
}

// ---- what this process found ------------------------------------------------------------------

struct State {
  bool configured = false;
  std::vector<PeerConfig> peers;
};

State& state() {
  static State s;
  return s;
}

// The probe: check every loaded peer, print one line per peer, exit.
[[noreturn]] void run_probe() {
  bool all_right = true;
  std::string detail;
  if (openblas_loaded()) {
    const bool ok = check_openblas(&detail);
    std::printf("openblas %s %s\n", ok ? "ok" : "wrong", ok ? "" : detail.c_str());
    all_right &= ok;
  }
  if (blis_loaded()) {
    const bool ok = check_blis(&detail);
    std::printf("blis %s %s\n", ok ? "ok" : "wrong", ok ? "" : detail.c_str());
    all_right &= ok;
  }
  std::fflush(stdout);
  std::_Exit(all_right ? 0 : 1);
}

// Runs this program as a probe with `settings` added to its environment; returns the probe's
// output ("" when it crashed or hung: a core that kills the process is as unusable as a wrong
// one). Bounded: a probe that takes longer than two minutes is killed.
std::string probe(char** argv, const std::map<std::string, std::string>& settings, bool* passed) {
  *passed = false;
  int out[2];
  if (pipe(out) != 0) return "";
  const pid_t child = fork();
  if (child < 0) return "";
  if (child == 0) {
    dup2(out[1], STDOUT_FILENO);
    close(out[0]);
    close(out[1]);
    for (const auto& [name, value] : settings) setenv(name.c_str(), value.c_str(), 1);
    setenv(kProbe, "1", 1);
    execv("/proc/self/exe", argv);
    std::_Exit(127);
  }
  close(out[1]);
  std::string text;
  char buffer[512];
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
  int status = 0;
  for (;;) {  // read until the probe closes its output, or the deadline
    pollfd readable{out[0], POLLIN, 0};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || poll(&readable, 1, static_cast<int>(left.count())) <= 0) {
      kill(child, SIGKILL);
      waitpid(child, &status, 0);
      close(out[0]);
      return "";
    }
    const ssize_t got = read(out[0], buffer, sizeof buffer);
    if (got <= 0) break;
    text.append(buffer, static_cast<std::size_t>(got));
  }
  close(out[0]);
  waitpid(child, &status, 0);
  *passed = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  return text;
}

bool probe_says_ok(const std::string& text, const std::string& library) {
  return text.find(library + " ok") != std::string::npos;
}

// One library's choice: the candidates to try (best first), the one that passed, and notes.
struct Choice {
  std::string library;   // "openblas" or "blis"
  std::string variable;  // the environment variable it reads
  std::string own;       // what it picked itself
  std::vector<std::string> candidates;
  std::size_t next = 0;  // the candidate being tried
  bool explicit_choice = false;
  std::string rejected;  // candidates that failed, with why
  std::string value(const std::string& candidate) const {
    return library == "blis" ? std::to_string(blis_arch_id(candidate)) : candidate;
  }
};

PeerConfig describe_loaded(const std::string& library, const std::string& own,
                           const std::string& note) {
  PeerConfig p;
  p.library = library == "openblas" ? "OpenBLAS" : "BLIS";
  p.version = library == "openblas" ? openblas_version() : blis_version();
  p.kernels = library == "openblas" ? openblas_core() : blis_arch();
  p.own_choice = own.empty() ? p.kernels : own;
  p.isa = library == "openblas" ? openblas_core_isa(p.kernels) : blis_arch_isa(p.kernels);
  std::string detail;
  p.checked = library == "openblas" ? check_openblas(&detail) : check_blis(&detail);
  p.at_best = p.checked && p.isa >= cpu_isa();  // a reader's explicit choice too is named as such
  p.note = note;
  if (!p.checked) p.note += (p.note.empty() ? "" : "; ") + ("its GEMM is wrong here: " + detail);
  if (p.checked && !p.at_best && note.empty())
    p.note = isa_name(p.isa) + " kernels on an " + isa_name(cpu_isa()) + " CPU";
  return p;
}

// "openblas=Prescott;blis=zen3;note-openblas=..." <-> map.
std::map<std::string, std::string> parse_state(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  std::string item;
  while (std::getline(in, item, ';')) {
    const auto eq = item.find('=');
    if (eq != std::string::npos) out[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return out;
}

std::string config_line(const PeerConfig& p, const char* kernel_word) {
  std::string s =
      p.library + " " + p.version + ", " + kernel_word + " " + p.kernels + " (" + isa_name(p.isa);
  s += p.own_choice == p.kernels ? ", its own choice" : "; it chose " + p.own_choice + " itself";
  s += ")";
  s += p.checked ? ", checked" : ", NOT checked";
  if (!p.note.empty()) s += "; " + p.note;
  return s;
}

}  // namespace

Isa openblas_core_isa(std::string_view core) {
  const std::string c = lower(core);
  if (c == "skylakex" || c == "cooperlake" || c == "sapphirerapids") return Isa::kAvx512;
  if (c == "haswell" || c == "zen") return Isa::kAvx2;
  if (c == "sandybridge" || c == "bulldozer" || c == "piledriver" || c == "steamroller" ||
      c == "excavator")
    return Isa::kAvx;
  return Isa::kSse;
}

std::vector<std::string> openblas_cores_to_try(Isa cpu, bool amd, std::string_view chosen) {
  const Isa have = openblas_core_isa(chosen);
  std::vector<std::string> out;
  if (cpu >= Isa::kAvx512 && have < Isa::kAvx512) out.push_back("SkylakeX");
  if (cpu >= Isa::kAvx2 && have < Isa::kAvx2) out.push_back(amd ? "Zen" : "Haswell");
  if (cpu >= Isa::kAvx && have < Isa::kAvx) out.push_back("Sandybridge");
  return out;
}

Isa blis_arch_isa(std::string_view arch) {
  const std::string a = lower(arch);
  if (a == "skx" || a == "knl") return Isa::kAvx512;
  if (a == "haswell" || a.rfind("zen", 0) == 0) return Isa::kAvx2;
  if (a == "sandybridge" || a == "excavator" || a == "steamroller" || a == "piledriver" ||
      a == "bulldozer")
    return Isa::kAvx;
  return Isa::kSse;
}

std::vector<std::string> blis_archs_to_try(Isa cpu, std::string_view chosen) {
  const Isa have = blis_arch_isa(chosen);
  std::vector<std::string> out;
  if (cpu >= Isa::kAvx512 && have < Isa::kAvx512) out.push_back("skx");
  if (cpu >= Isa::kAvx2 && have < Isa::kAvx2) out.push_back("haswell");
  if (cpu >= Isa::kAvx && have < Isa::kAvx) out.push_back("sandybridge");
  return out;
}

void use_peers_at_their_best(int argc, char** argv) {
  (void)argc;
  State& s = state();
  if (s.configured) return;
  s.configured = true;
  if (!env(kProbe).empty()) run_probe();

  const bool has_openblas = openblas_loaded(), has_blis = blis_loaded();
  const std::string mode = env("BOOK_PEERS");
  const std::string state_text = env(kState);

  // The second run: the first one chose, probed and restarted us with the settings.
  if (!state_text.empty()) {
    const auto found = parse_state(state_text);
    auto get = [&found](const std::string& key) {
      const auto it = found.find(key);
      return it == found.end() ? std::string() : it->second;
    };
    if (has_openblas)
      s.peers.push_back(describe_loaded("openblas", get("openblas"), get("note-openblas")));
    if (has_blis) s.peers.push_back(describe_loaded("blis", get("blis"), get("note-blis")));
    unsetenv(kState);  // children of this program (a Python peer) start afresh
    return;
  }

  // ATen reads its setting at its first operator, so setting it now is enough (no restart). The
  // libtorch peer checks its own results against ours.
  if (mode != "as-is" && cpu_isa() == Isa::kAvx512 && env("ATEN_CPU_CAPABILITY").empty())
    setenv("ATEN_CPU_CAPABILITY", "avx512", 1);

  const std::string as_is_note = "as-is (BOOK_PEERS=as-is)";
  std::vector<Choice> choices;
  if (has_openblas) {
    Choice c{"openblas", "OPENBLAS_CORETYPE", openblas_core(), {}, 0, false, ""};
    if (!env("BOOK_PEERS_OPENBLAS").empty()) {
      c.candidates = {env("BOOK_PEERS_OPENBLAS")};
      c.explicit_choice = true;
    } else if (mode != "as-is") {
      c.candidates = openblas_cores_to_try(cpu_isa(), __builtin_cpu_is("amd"), c.own);
    }
    choices.push_back(c);
  }
  if (has_blis) {
    Choice c{"blis", "BLIS_ARCH_TYPE", blis_arch(), {}, 0, false, ""};
    if (!env("BOOK_PEERS_BLIS").empty()) {
      c.candidates = {env("BOOK_PEERS_BLIS")};
      c.explicit_choice = true;
    } else if (mode != "as-is") {
      c.candidates = blis_archs_to_try(cpu_isa(), c.own);
    }
    for (auto it = c.candidates.begin(); it != c.candidates.end();) {  // not in this build
      if (blis_arch_id(*it) < 0) {
        c.rejected += (c.rejected.empty() ? "" : ", ") + *it + " is not a BLIS configuration";
        it = c.candidates.erase(it);
      } else {
        ++it;
      }
    }
    choices.push_back(c);
  }

  // Try the best candidates together; a library whose candidate fails moves to its next one.
  // At most a handful of probes: each list has at most three entries.
  auto settings_now = [&choices] {
    std::map<std::string, std::string> settings;
    for (const Choice& c : choices)
      if (c.next < c.candidates.size()) settings[c.variable] = c.value(c.candidates[c.next]);
    return settings;
  };
  std::map<std::string, std::string> settings = settings_now();
  while (!settings.empty()) {
    bool passed = false;
    const std::string text = probe(argv, settings, &passed);
    if (passed) break;
    bool moved = false;
    for (Choice& c : choices) {
      if (c.next >= c.candidates.size()) continue;
      if (probe_says_ok(text, c.library)) continue;
      const std::string why = text.empty() ? "crashed or hung" : "computed wrong results";
      c.rejected += (c.rejected.empty() ? "" : ", ") + c.candidates[c.next] + " " + why;
      ++c.next;
      moved = true;
    }
    if (!moved) {  // nothing to blame: give up on every change
      for (Choice& c : choices) c.next = c.candidates.size();
    }
    settings = settings_now();
  }

  // The notes the second run prints: how each choice was made.
  std::string next_state;
  for (const Choice& c : choices) {
    std::string note;
    if (c.explicit_choice && c.next < c.candidates.size())
      note = "chosen by BOOK_PEERS_" + std::string(c.library == "blis" ? "BLIS" : "OPENBLAS");
    if (mode == "as-is" && !c.explicit_choice) note = as_is_note;
    if (!c.rejected.empty()) note += (note.empty() ? "" : "; ") + ("rejected: " + c.rejected);
    if (c.library == "openblas" && !env("OPENBLAS_CORETYPE").empty() && settings.count(c.variable))
      note +=
          (note.empty() ? "" : "; ") + ("the environment asked for " + env("OPENBLAS_CORETYPE"));
    next_state += c.library + "=" + c.own + ";note-" + c.library + "=" + note + ";";
  }

  if (settings.empty()) {  // every library keeps its own choice: no restart
    for (const Choice& c : choices) {
      const auto found = parse_state(next_state);
      s.peers.push_back(describe_loaded(
          c.library, c.own, found.count("note-" + c.library) ? found.at("note-" + c.library) : ""));
    }
    return;
  }
  for (const auto& [name, value] : settings) setenv(name.c_str(), value.c_str(), 1);
  // A core chosen here is sized by the library itself: an L2 size set for another core goes too.
  if (settings.count("OPENBLAS_CORETYPE")) unsetenv("OPENBLAS_L2_SIZE");
  setenv(kState, next_state.c_str(), 1);
  std::cout.flush();
  std::fflush(nullptr);
  execv("/proc/self/exe", argv);
  // The restart failed: go on with the libraries' own choices, and say so.
  unsetenv(kState);
  for (const Choice& c : choices)
    s.peers.push_back(
        describe_loaded(c.library, c.own, "could not restart the program to configure it"));
}

std::vector<PeerConfig> peer_configs() { return state().peers; }

std::string openblas_description() {
  for (const PeerConfig& p : state().peers)
    if (p.library == "OpenBLAS") return config_line(p, "core");
  if (openblas_loaded())
    return "OpenBLAS " + openblas_version() + ", core " + openblas_core() +
           " (not configured: use_peers_at_their_best() was not called)";
  return "OpenBLAS not loaded";
}

std::string blis_description() {
  for (const PeerConfig& p : state().peers)
    if (p.library == "BLIS") return config_line(p, "configuration");
  if (blis_loaded())
    return "BLIS " + blis_version() + " (not configured: use_peers_at_their_best() was not called)";
  return "BLIS not loaded";
}

bool all_at_best() {
  if (!state().configured) return false;
  for (const PeerConfig& p : state().peers)
    if (!p.at_best) return false;
  return true;
}

std::string not_at_best_warning() {
  if (!state().configured) return "peer not configured: use_peers_at_their_best() was not called";
  std::string out;
  for (const PeerConfig& p : state().peers)
    if (!p.at_best)
      out += (out.empty() ? "peer not at its best: " : "; ") + p.library + " " + p.kernels + " (" +
             isa_name(p.isa) + ") on an " + isa_name(cpu_isa()) + " CPU" +
             (p.note.empty() ? "" : ": " + p.note);
  return out;
}

std::string kernels_of(const std::string& library) {
  for (const PeerConfig& p : state().peers)
    if (p.library == library) return p.kernels;
  return "not loaded";
}

std::string ratio_against(double ratio, const std::string& peer) {
  const std::string text = fixed(ratio, 2) + "x " + peer;
  return all_at_best() ? text : text + " (not a result: peer not at its best)";
}

Table peers_table() {
  Table table({"library", "version", "kernels", "isa", "own choice", "checked", "at its best",
               "note", "cpu", "cpu isa"});
  for (const PeerConfig& p : state().peers)
    table.add_row({p.library, p.version, p.kernels, isa_name(p.isa), p.own_choice,
                   p.checked ? "yes" : "no", p.at_best ? "yes" : "no", p.note, cpu_model(),
                   isa_name(cpu_isa())});
  return table;
}

int openblas_threads() {
  auto fn = reinterpret_cast<IntFn>(any_symbol("openblas_get_num_threads"));
  return fn ? fn() : 0;
}

void set_openblas_threads(int threads) {
  auto fn = reinterpret_cast<SetIntFn>(any_symbol("openblas_set_num_threads"));
  if (fn) fn(threads);
}

}  // namespace book::peers
