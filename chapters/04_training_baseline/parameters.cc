#include "chapters/04_training_baseline/parameters.h"

#include <algorithm>
#include <iterator>

#include "common/check.h"

namespace book::train {

ParameterLayout::ParameterLayout(const Config& config, const ModelPart& part)
    : config_(config), part_((config.validate(), part.resolved(config))) {
  const std::size_t c = config.d_model;
  const TensorParallelSlice& tp = part_.tensor_parallel;
  const std::size_t w = tp.width(config), f = tp.hidden(config);
  using Split = TensorParallelSplit;
  auto add = [&](std::string name, std::size_t rows, std::size_t cols, bool decay,
                 Split split = Split::kReplicated, int column_groups = 1) {
    slots_.push_back({std::move(name), total_, rows, cols, decay, split, column_groups});
    total_ += rows * cols;
  };
  // The token embedding: whole, or this rank's rows of the vocabulary (split_vocabulary).
  const Split vocab_split = tp.split_vocabulary ? Split::kRows : Split::kReplicated;
  const std::size_t vocab_rows = tp.vocab_rows(config);
  if (part_.has_embedding()) {
    add("wte", vocab_rows, c, true, vocab_split);
    add("wpe", config.context, c, true);
  }
  for (int l = part_.first_layer; l < part_.last_layer; ++l) {
    const std::string h = "h" + std::to_string(l) + ".";
    add(h + "ln1_gain", 1, c, false);
    add(h + "ln1_bias", 1, c, false);
    add(h + "w_qkv", c, 3 * w, true, Split::kColumns, 3);
    add(h + "b_qkv", 1, 3 * w, false, Split::kColumns, 3);
    add(h + "w_out", w, c, true, Split::kRows);
    add(h + "b_out", 1, c, false);
    add(h + "ln2_gain", 1, c, false);
    add(h + "ln2_bias", 1, c, false);
    add(h + "w_fc", c, f, true, Split::kColumns);
    add(h + "b_fc", 1, f, false, Split::kColumns);
    add(h + "w_proj", f, c, true, Split::kRows);
    add(h + "b_proj", 1, c, false);
  }
  if (part_.has_head(config)) {
    add("lnf_gain", 1, c, false);
    add("lnf_bias", 1, c, false);
    if (!part_.has_embedding()) add("wte", vocab_rows, c, true, vocab_split);  // the tied LM head
  }
}

bool ParameterLayout::contains(const std::string& name) const {
  return std::any_of(slots_.begin(), slots_.end(),
                     [&](const TensorSlot& slot) { return slot.name == name; });
}

const TensorSlot& ParameterLayout::find(const std::string& name) const {
  for (const auto& slot : slots_)
    if (slot.name == name) return slot;
  BOOK_CHECK(false, "no parameter called '"
                        << name << "' in this part (layers " << part_.first_layer << ".."
                        << part_.last_layer - 1
                        << "; names look like wte, wpe, h0.w_qkv, h0.ln1_gain, lnf_bias)");
}

std::pair<std::size_t, std::size_t> ParameterLayout::layer_range(int layer) const {
  BOOK_CHECK(part_.first_layer <= layer && layer < part_.last_layer,
             "layer_range: there is no layer " << layer << " in this part (it holds layers "
                                               << part_.first_layer << ".." << part_.last_layer - 1
                                               << ")");
  const std::string prefix = "h" + std::to_string(layer) + ".";
  const TensorSlot& first = find(prefix + "ln1_gain");
  const TensorSlot& last = find(prefix + "b_proj");
  return {first.offset, last.offset + last.size()};
}

std::pair<std::size_t, std::size_t> ParameterLayout::embedding_range() const {
  BOOK_CHECK(part_.has_embedding(), "embedding_range: this part (layers "
                                        << part_.first_layer << ".." << part_.last_layer - 1
                                        << ") does not hold the embeddings");
  const TensorSlot& wpe = find("wpe");
  return {find("wte").offset, wpe.offset + wpe.size()};
}

std::pair<std::size_t, std::size_t> ParameterLayout::head_range() const {
  BOOK_CHECK(part_.has_head(config_), "head_range: this part (layers "
                                          << part_.first_layer << ".." << part_.last_layer - 1
                                          << ") does not hold the final LayerNorm and the head");
  return {find("lnf_gain").offset, total_};
}

std::vector<SlotPiece> ParameterLayout::pieces(std::size_t begin, std::size_t end) const {
  BOOK_CHECK(begin <= end && end <= total_, "ParameterLayout::pieces: range ["
                                                << begin << ", " << end
                                                << ") is not inside the flat buffer of " << total_
                                                << " elements");
  std::vector<SlotPiece> out;
  for (const auto& slot : slots_) {
    const std::size_t b = std::max(begin, slot.offset),
                      e = std::min(end, slot.offset + slot.size());
    if (b < e) out.push_back({&slot, b, e});
  }
  return out;
}

bool ParameterLayout::decays(std::size_t element) const {
  BOOK_CHECK(element < total_, "ParameterLayout::decays: element "
                                   << element << " is outside the flat buffer of " << total_
                                   << " elements");
  const auto after =
      std::upper_bound(slots_.begin(), slots_.end(), element,
                       [](std::size_t e, const TensorSlot& slot) { return e < slot.offset; });
  return std::prev(after)->decay;
}

template <typename T>
ModelTensors<T> bind(const ParameterLayout& layout, T* base) {
  BOOK_CHECK(base != nullptr, "bind: the flat buffer is null");
  auto at = [&](const std::string& name) {
    return layout.contains(name) ? base + layout.find(name).offset : nullptr;
  };
  ModelTensors<T> t;
  t.wte = at("wte");
  t.wpe = at("wpe");
  for (int l = layout.part().first_layer; l < layout.part().last_layer; ++l) {
    const std::string h = "h" + std::to_string(l) + ".";
    t.blocks.push_back({at(h + "ln1_gain"), at(h + "ln1_bias"), at(h + "w_qkv"), at(h + "b_qkv"),
                        at(h + "w_out"), at(h + "b_out"), at(h + "ln2_gain"), at(h + "ln2_bias"),
                        at(h + "w_fc"), at(h + "b_fc"), at(h + "w_proj"), at(h + "b_proj")});
  }
  t.lnf_gain = at("lnf_gain");
  t.lnf_bias = at("lnf_bias");
  return t;
}

template ModelTensors<float> bind(const ParameterLayout&, float*);
template ModelTensors<double> bind(const ParameterLayout&, double*);

template <typename T>
ModelTensors<T> unbound(const ParameterLayout& layout) {
  ModelTensors<T> t;
  t.blocks.resize(static_cast<std::size_t>(layout.part().last_layer - layout.part().first_layer));
  return t;
}

template <typename T>
void rebind(const ParameterLayout& layout, std::size_t begin, std::size_t end, T* base,
            ModelTensors<T>& tensors) {
  BOOK_CHECK(base != nullptr, "rebind: the buffer for elements [" << begin << ", " << end
                                                                  << ") is null");
  BOOK_CHECK(begin <= end && end <= layout.total(),
             "rebind: range [" << begin << ", " << end << ") leaves the flat buffer of "
                               << layout.total() << " elements");
  for (const SlotPiece& piece : layout.pieces(begin, end))
    BOOK_CHECK(piece.begin == piece.slot->offset &&
                   piece.end == piece.slot->offset + piece.slot->size(),
               "rebind: range [" << begin << ", " << end << ") cuts tensor " << piece.slot->name
                                 << " [" << piece.slot->offset << ", "
                                 << piece.slot->offset + piece.slot->size() << ")");
  auto set = [&](T*& pointer, const std::string& name) {
    if (!layout.contains(name)) return;
    const TensorSlot& slot = layout.find(name);
    if (slot.offset >= begin && slot.offset + slot.size() <= end && slot.size() > 0)
      pointer = base + (slot.offset - begin);
  };
  set(tensors.wte, "wte");
  set(tensors.wpe, "wpe");
  for (int l = layout.part().first_layer; l < layout.part().last_layer; ++l) {
    const std::string h = "h" + std::to_string(l) + ".";
    BlockTensors<T>& b = tensors.blocks[static_cast<std::size_t>(l - layout.part().first_layer)];
    set(b.ln1_gain, h + "ln1_gain"), set(b.ln1_bias, h + "ln1_bias");
    set(b.w_qkv, h + "w_qkv"), set(b.b_qkv, h + "b_qkv");
    set(b.w_out, h + "w_out"), set(b.b_out, h + "b_out");
    set(b.ln2_gain, h + "ln2_gain"), set(b.ln2_bias, h + "ln2_bias");
    set(b.w_fc, h + "w_fc"), set(b.b_fc, h + "b_fc");
    set(b.w_proj, h + "w_proj"), set(b.b_proj, h + "b_proj");
  }
  set(tensors.lnf_gain, "lnf_gain");
  set(tensors.lnf_bias, "lnf_bias");
}

template ModelTensors<float> unbound(const ParameterLayout&);
template ModelTensors<double> unbound(const ParameterLayout&);
template void rebind(const ParameterLayout&, std::size_t, std::size_t, float*,
                     ModelTensors<float>&);
template void rebind(const ParameterLayout&, std::size_t, std::size_t, double*,
                     ModelTensors<double>&);

}  // namespace book::train
