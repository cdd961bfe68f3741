// Prints what use_peers_at_their_best() chose for this machine's OpenBLAS and BLIS (both linked
// here), one "key: value" line each, for a reader and for peers_test.
//
//   bazel run //common:peers_check
//   BOOK_PEERS_OPENBLAS=Haswell bazel run //common:peers_check
#include <iostream>

#include "common/main.h"
#include "common/peers.h"

// Referenced so that the linker keeps both libraries (the peers are found by their symbols).
extern "C" {
char* openblas_get_corename(void);
void bli_init(void);
}
void* volatile keep_linked[] = {reinterpret_cast<void*>(&openblas_get_corename),
                                reinterpret_cast<void*>(&bli_init)};

namespace {

int body(int, char**) {
  namespace peers = book::peers;
  std::cout << "cpu: " << book::cpu_model() << " (" << book::isa_name(book::cpu_isa()) << ")\n"
            << "openblas: " << peers::openblas_description() << "\n"
            << "blis: " << peers::blis_description() << "\n"
            << "at-best: " << (peers::all_at_best() ? "yes" : "no") << "\n";
  for (const peers::PeerConfig& p : peers::peer_configs())
    std::cout << "kernels " << p.library << ": " << p.kernels << "\nown " << p.library << ": "
              << p.own_choice << "\nchecked " << p.library << ": " << (p.checked ? "yes" : "no")
              << "\n";
  const std::string warning = peers::not_at_best_warning();
  if (!warning.empty()) std::cout << "warning: " << warning << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  book::peers::use_peers_at_their_best(argc, argv);
  return book::run_main(argc, argv, body);
}
