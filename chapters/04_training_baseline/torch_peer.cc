// The libtorch twin of model.cc: the same architecture in a dozen tensor expressions, with
// autograd doing the backward pass our layers do by hand.
#include "chapters/04_training_baseline/torch_peer.h"

#include <ATen/Version.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <cmath>

#include "chapters/04_training_baseline/parameters.h"
#include "common/check.h"
#include "common/peers.h"

namespace book::train {

struct TorchGpt::Impl {
  Config config;
  ParameterLayout layout;
  std::vector<torch::Tensor> tensors;  // one leaf per TensorSlot, in layout order
  std::unique_ptr<torch::optim::AdamW> optimizer;
  explicit Impl(const Config& c) : config(c), layout(c) {}
  const torch::Tensor& at(const std::string& name) const {
    const auto& slots = layout.slots();
    for (std::size_t i = 0; i < slots.size(); ++i)
      if (slots[i].name == name) return tensors[i];
    BOOK_CHECK(false, "TorchGpt: no tensor " << name);
  }
};

TorchGpt::TorchGpt(const Config& config, const float* params, int threads, int blas_threads)
    : impl_(std::make_unique<Impl>(config)) {
  if (threads > 0) torch::set_num_threads(threads);
  if (blas_threads > 0) peers::set_openblas_threads(blas_threads);
  std::vector<torch::Tensor> decay, no_decay;
  for (const auto& slot : impl_->layout.slots()) {
    auto t = torch::from_blob(const_cast<float*>(params + slot.offset),
                              {static_cast<long>(slot.rows), static_cast<long>(slot.cols)})
                 .clone()
                 .set_requires_grad(true);
    if (slot.rows == 1) t = t.view({static_cast<long>(slot.cols)}).detach().set_requires_grad(true);
    impl_->tensors.push_back(t);
    (slot.decay ? decay : no_decay).push_back(t);
  }
  AdamWConfig ours;
  auto options = torch::optim::AdamWOptions(1e-3).betas({ours.beta1, ours.beta2}).eps(ours.epsilon);
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(decay,
                      std::make_unique<torch::optim::AdamWOptions>(
                          torch::optim::AdamWOptions(options).weight_decay(ours.weight_decay)));
  groups.emplace_back(no_decay, std::make_unique<torch::optim::AdamWOptions>(
                                    torch::optim::AdamWOptions(options).weight_decay(0)));
  impl_->optimizer = std::make_unique<torch::optim::AdamW>(groups, options);
}

TorchGpt::~TorchGpt() = default;

int TorchGpt::threads() { return torch::get_num_threads(); }

std::string TorchGpt::configuration() {
  // ATen's vector ISA is in its build summary: "CPU capability usage: AVX512".
  std::string isa = "?";
  const std::string config = at::show_config();
  const std::string key = "CPU capability usage: ";
  if (const auto at = config.find(key); at != std::string::npos)
    isa = config.substr(at + key.size(), config.find('\n', at) - at - key.size());
  return "libtorch " + std::string(TORCH_VERSION) + ", ATen " + isa + ", " +
         std::to_string(torch::get_num_threads()) + " intra-op thread(s); " +
         peers::openblas_description() + ", " + std::to_string(peers::openblas_threads()) +
         " thread(s)";
}

float TorchGpt::forward_backward(const std::vector<int>& tokens, const std::vector<int>& targets,
                                 int batch, int seq_len) {
  const Config& c = impl_->config;
  const long B = batch, T = seq_len, C = c.d_model, H = c.n_head, hs = c.head_size();
  for (auto& t : impl_->tensors)
    if (t.grad().defined()) t.grad().zero_();
  auto ids = torch::tensor(std::vector<long>(tokens.begin(), tokens.end()), torch::kLong);
  auto labels = torch::tensor(std::vector<long>(targets.begin(), targets.end()), torch::kLong);
  const auto& wte = impl_->at("wte");
  auto x = wte.index_select(0, ids).view({B, T, C}) + impl_->at("wpe").slice(0, 0, T);
  const auto mask = torch::ones({T, T}, torch::kBool).triu(1);  // true above the diagonal
  for (int l = 0; l < c.n_layer; ++l) {
    const std::string h = "h" + std::to_string(l) + ".";
    auto n1 = torch::layer_norm(x, {C}, impl_->at(h + "ln1_gain"), impl_->at(h + "ln1_bias"), 1e-5);
    auto qkv = n1.matmul(impl_->at(h + "w_qkv")) + impl_->at(h + "b_qkv");
    auto parts = qkv.split(C, -1);
    auto heads = [&](const torch::Tensor& t) { return t.view({B, T, H, hs}).transpose(1, 2); };
    auto q = heads(parts[0]), k = heads(parts[1]), v = heads(parts[2]);
    auto scores = q.matmul(k.transpose(-2, -1)) / std::sqrt(static_cast<double>(hs));
    auto att = scores.masked_fill(mask, -std::numeric_limits<float>::infinity()).softmax(-1);
    auto y = att.matmul(v).transpose(1, 2).reshape({B, T, C});
    x = x + y.matmul(impl_->at(h + "w_out")) + impl_->at(h + "b_out");
    auto n2 = torch::layer_norm(x, {C}, impl_->at(h + "ln2_gain"), impl_->at(h + "ln2_bias"), 1e-5);
    auto f = torch::gelu(n2.matmul(impl_->at(h + "w_fc")) + impl_->at(h + "b_fc"), "tanh");
    x = x + f.matmul(impl_->at(h + "w_proj")) + impl_->at(h + "b_proj");
  }
  auto xf = torch::layer_norm(x, {C}, impl_->at("lnf_gain"), impl_->at("lnf_bias"), 1e-5);
  auto logits = xf.view({B * T, C}).matmul(wte.t());
  auto loss = torch::nn::functional::cross_entropy(
      logits, labels, torch::nn::functional::CrossEntropyFuncOptions().ignore_index(-1));
  loss.backward();
  return loss.item<float>();
}

std::vector<float> TorchGpt::gradients() const {
  std::vector<float> out;
  out.reserve(impl_->layout.total());
  for (const auto& t : impl_->tensors) {
    auto g = t.grad().defined() ? t.grad().contiguous() : torch::zeros_like(t);
    out.insert(out.end(), g.data_ptr<float>(), g.data_ptr<float>() + g.numel());
  }
  return out;
}

void TorchGpt::adamw_step(float lr) {
  for (auto& group : impl_->optimizer->param_groups())
    static_cast<torch::optim::AdamWOptions&>(group.options()).lr(lr);
  impl_->optimizer->step();
}

}  // namespace book::train
