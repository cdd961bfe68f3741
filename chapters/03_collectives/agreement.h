/// @file
/// Ranks that must agree, checked before they depend on it. Ranks started with different options
/// (another seed, another stage, other degrees) would train different models without an error, or
/// call different collectives and wait for each other until the timeout. So each rank hashes what
/// must agree into a fingerprint (FNV-1a) and one all-gather compares them: every rank throws the
/// same error, naming the ranks that differ, before anything else is sent.
#pragma once

#include <cstdint>
#include <string>

#include "chapters/03_collectives/communicator.h"

namespace book::coll {

/// Throws book::Error on every rank unless every rank of `comm` passed the same `fingerprint`:
/// "<who>: the <what> of rank(s) 2, 3 differ from rank 0's (fingerprint …): <remedy>".
/// Collective: one all-gather of 8 bytes per rank.
void require_same_on_every_rank(Communicator& comm, std::uint64_t fingerprint,
                                const std::string& who, const std::string& what,
                                const std::string& remedy);

}  // namespace book::coll
