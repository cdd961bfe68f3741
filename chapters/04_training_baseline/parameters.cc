#include "chapters/04_training_baseline/parameters.h"

#include <algorithm>
#include <iterator>

#include "common/check.h"

namespace book::train {

ParameterLayout::ParameterLayout(const Config& config) {
  config.validate();
  const std::size_t c = config.d_model, f = config.d_ff();
  auto add = [&](std::string name, std::size_t rows, std::size_t cols, bool decay) {
    slots_.push_back({std::move(name), total_, rows, cols, decay});
    total_ += rows * cols;
  };
  add("wte", config.vocab_size, c, true);
  add("wpe", config.context, c, true);
  for (int l = 0; l < config.n_layer; ++l) {
    const std::string h = "h" + std::to_string(l) + ".";
    add(h + "ln1_gain", 1, c, false);
    add(h + "ln1_bias", 1, c, false);
    add(h + "w_qkv", c, 3 * c, true);
    add(h + "b_qkv", 1, 3 * c, false);
    add(h + "w_out", c, c, true);
    add(h + "b_out", 1, c, false);
    add(h + "ln2_gain", 1, c, false);
    add(h + "ln2_bias", 1, c, false);
    add(h + "w_fc", c, f, true);
    add(h + "b_fc", 1, f, false);
    add(h + "w_proj", f, c, true);
    add(h + "b_proj", 1, c, false);
  }
  add("lnf_gain", 1, c, false);
  add("lnf_bias", 1, c, false);
}

const TensorSlot& ParameterLayout::find(const std::string& name) const {
  for (const auto& slot : slots_)
    if (slot.name == name) return slot;
  BOOK_CHECK(false, "no parameter called '" << name << "' (names look like wte, wpe, h0.w_qkv, "
                                            << "h0.ln1_gain, lnf_bias)");
}

std::pair<std::size_t, std::size_t> ParameterLayout::layer_range(int layer) const {
  const std::string prefix = "h" + std::to_string(layer) + ".";
  std::size_t begin = total_, end = 0;
  for (const auto& slot : slots_)
    if (slot.name.rfind(prefix, 0) == 0) {
      begin = std::min(begin, slot.offset);
      end = std::max(end, slot.offset + slot.size());
    }
  BOOK_CHECK(begin < end, "layer_range: there is no layer " << layer);
  return {begin, end};
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
ModelTensors<T> bind(const ParameterLayout& layout, int n_layer, T* base) {
  BOOK_CHECK(base != nullptr, "bind: the flat buffer is null");
  auto at = [&](const std::string& name) { return base + layout.find(name).offset; };
  ModelTensors<T> t;
  t.wte = at("wte");
  t.wpe = at("wpe");
  for (int l = 0; l < n_layer; ++l) {
    const std::string h = "h" + std::to_string(l) + ".";
    t.blocks.push_back({at(h + "ln1_gain"), at(h + "ln1_bias"), at(h + "w_qkv"), at(h + "b_qkv"),
                        at(h + "w_out"), at(h + "b_out"), at(h + "ln2_gain"), at(h + "ln2_bias"),
                        at(h + "w_fc"), at(h + "b_fc"), at(h + "w_proj"), at(h + "b_proj")});
  }
  t.lnf_gain = at("lnf_gain");
  t.lnf_bias = at("lnf_bias");
  return t;
}

template ModelTensors<float> bind(const ParameterLayout&, int, float*);
template ModelTensors<double> bind(const ParameterLayout&, int, double*);

}  // namespace book::train
