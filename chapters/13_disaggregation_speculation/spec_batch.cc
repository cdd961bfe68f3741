// Runs many sequences' chunks in as few model steps as the runner's max_rows allows.
#include "chapters/13_disaggregation_speculation/spec_batch.h"

#include "common/check.h"

namespace book::spec {

std::vector<std::vector<float>> run_chunks(kv::ModelRunner& runner,
                                           const std::vector<kv::SequenceChunk>& chunks) {
  std::vector<std::vector<float>> out;
  const int vocab = runner.config().vocab_size;
  for (std::size_t first = 0; first < chunks.size();) {
    std::size_t last = first;
    int rows = 0;
    while (last < chunks.size() &&
           rows + static_cast<int>(chunks[last].tokens.size()) <= runner.max_rows())
      rows += static_cast<int>(chunks[last++].tokens.size());
    BOOK_CHECK(last > first, "speculative decoding: a chunk of " << chunks[first].tokens.size()
                                                                 << " rows exceeds the runner's "
                                                                 << runner.max_rows());
    const auto logits = runner.run(std::span(chunks).subspan(first, last - first));
    std::size_t at = 0;
    for (std::size_t c = first; c < last; ++c) {
      const std::size_t n = (chunks[c].all_logits ? chunks[c].tokens.size() : 1) * vocab;
      out.emplace_back(logits.begin() + at, logits.begin() + at + n);
      at += n;
    }
    first = last;
  }
  return out;
}

}  // namespace book::spec
