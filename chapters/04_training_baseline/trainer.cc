#include "chapters/04_training_baseline/trainer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

#include "chapters/04_training_baseline/checkpoint.h"
#include "chapters/04_training_baseline/checkpoint_checks.h"
#include "chapters/04_training_baseline/clipping.h"
#include "chapters/04_training_baseline/mixed_precision.h"
#include "chapters/04_training_baseline/profile.h"
#include "chapters/04_training_baseline/step.h"
#include "common/check.h"

namespace book::train {
namespace {

TrainOptions with_task_shape(TrainOptions options) {
  const AdditionTask task(options.digits);
  options.model.vocab_size = AdditionTask::vocab_size();
  options.model.context = task.model_context();
  options.model.validate();
  check_trainable(options, "TrainOptions");
  return options;
}

// The checkpoint's code for a precision, the same since format version 1: 0 f32, 1 bf16, 2 f16.
std::int32_t precision_code(DType precision) {
  return precision == DType::kF32 ? 0 : precision == DType::kBF16 ? 1 : 2;
}

// In mixed precision the model's FP32 parameters and gradients are what the CPU computes with,
// copies of the 16-bit tensors a GPU would use directly: scratch, not model state.
ModelOptions<float> model_options(const TrainOptions& options, MemoryTracker* tracker) {
  ModelOptions<float> o;
  o.tracker = tracker;
  o.activation_policy = options.activation_policy;
  o.attention = options.attention;
  if (options.precision != DType::kF32)
    o.parameter_category = o.gradient_category = MemoryCategory::kOther;
  return o;
}

}  // namespace

void check_trainable(const TrainOptions& options, const char* who) {
  BOOK_CHECK(options.micro_batch >= 1 && options.accumulation >= 1,
             who << ": micro_batch and accumulation must be >= 1, got " << options.micro_batch
                 << " and " << options.accumulation);
  BOOK_CHECK(options.precision != DType::kF64,
             who << ": f64 is not a training precision; use f32, bf16 or f16");
  BOOK_CHECK(options.clip_norm > 0 && std::isfinite(options.clip_norm),
             who << ": clip_norm must be positive and finite, got " << options.clip_norm);
  validate(options.adamw);
  learning_rate(1, options.warmup_steps, options.total_steps, options.max_lr,
                options.min_lr);  // checks the schedule
}

StepResult begin_step(const TrainOptions& options, std::int64_t steps_done,
                      float fp16_loss_scale) {
  StepResult result;
  result.step = steps_done + 1;
  result.lr = learning_rate(result.step, options.warmup_steps, options.total_steps,
                            options.max_lr, options.min_lr);
  result.loss_scale = options.precision == DType::kF16 ? fp16_loss_scale : 1.0f;
  return result;
}

//! [check_not_diverged]
void check_not_diverged(const TrainOptions& options, const StepResult& step,
                        bool gradients_finite) {
  if (options.precision == DType::kF16) return;  // the loss scaler's rule: skip the step
  std::ostringstream advice;
  advice << "the run has diverged. No update was applied; lower max_lr (now " << options.max_lr
         << ") or clip_norm (now " << options.clip_norm
         << "), or resume from an earlier checkpoint";
  BOOK_CHECK(std::isfinite(step.loss), "step " << step.step << ": the training loss is "
                                               << step.loss << " ("
                                               << dtype_name(options.precision)
                                               << "): " << advice.str());
  BOOK_CHECK(gradients_finite, "step " << step.step << ": the gradients are not all finite ("
                                       << dtype_name(options.precision) << ", loss "
                                       << step.loss << "): " << advice.str());
}
//! [check_not_diverged]

Rng training_data_stream(const TrainOptions& options) { return Rng(options.seed ^ 0xda7aULL); }

double MemoryReport::state_bytes_per_parameter() const {
  return static_cast<double>(master_weights + adam_moments + low_weights + low_grads + fp32_grads) /
         static_cast<double>(parameters);
}

Trainer::Trainer(const TrainOptions& options, MemoryTracker* tracker)
    : options_(with_task_shape(options)),
      task_(options_.digits),
      tracker_(tracker != nullptr ? tracker : &own_tracker_),
      model_(options_.model, options_.micro_batch, model_options(options_, tracker_)),
      acts_(model_),
      optimizer_(options_.optimizer ? options_.optimizer(model_.layout(), tracker_) : nullptr),
      master_(mixed() && !(optimizer_ && !optimizer_->master_weights().empty())
                  ? model_.layout().total()
                  : 0,
              MemoryCategory::kMasterWeights, tracker_),
      adam_(0, options_.optimizer ? 0 : model_.layout().total(), tracker_),
      low_weights_(mixed() ? model_.layout().total() : 0, MemoryCategory::kParameters, tracker_),
      low_grads_(mixed() ? model_.layout().total() : 0, MemoryCategory::kGradients, tracker_),
      scaler_(options_.scaler),
      data_rng_(training_data_stream(options_)) {
  model_.init(options_.seed);
  if (mixed()) {
    std::copy(model_.params().begin(), model_.params().end(), master().begin());
    refresh_low_weights();
  }
}

// The forward pass reads the 16-bit weights: encode the master copy, and decode it into the
// float buffer the CPU kernels read (on a GPU the kernels would read the 16-bit copy directly).
void Trainer::refresh_low_weights() {
  encode(options_.precision, master(), low_weights_.span());
  decode(options_.precision, low_weights_.span(), model_.params().span());
}

std::int64_t Trainer::tokens_per_step() const {
  return std::int64_t{options_.micro_batch} * options_.accumulation * task_.model_context();
}

StepResult Trainer::step() {
  const StepResult result = run_step(options_, step_, scaler_, *this);
  step_ = result.step;
  return result;
}

void Trainer::zero_gradients() {
  const LayerScope scope("zero gradients");
  model_.zero_grad();
}

Batch Trainer::next_batch() {
  const LayerScope scope("sample a batch");
  return task_.batch(data_rng_, Split::kTrain, options_.micro_batch);
}

double Trainer::micro_batch(const Batch& batch, float loss_scale, bool /*last*/) {
  return train::forward_backward(model_, batch, loss_scale, acts_);
}

float Trainer::mean_loss(double loss_sum, int micro_batches) {
  return static_cast<float>(loss_sum / micro_batches);
}

bool Trainer::unscale_gradients(float loss_scale) {
  // The gradients as 16-bit storage would hold them, unscaled into FP32 (step.cc). One pass gives
  // the norm and the finite check: FP16's loss scaler skips the step when they are not finite.
  squares_ = unscaled_sum_of_squares(options_.precision, model_.grads().span(),
                                     low_grads_.span(), loss_scale);
  return std::isfinite(squares_);
}

double Trainer::clip_and_update(float lr) {
  const std::span<float> grads = model_.grads().span();
  scale_gradients(grads, clip_coefficient(squares_, options_.clip_norm));
  if (optimizer_)
    optimizer_->update(master(), grads, lr, options_.adamw);
  else
    adamw_update(model_.layout(), adam_, master(), grads, lr, options_.adamw);
  if (mixed()) refresh_low_weights();
  return std::sqrt(squares_);
}

float Trainer::validation_loss(int batches, std::uint64_t seed) {
  BOOK_CHECK(batches >= 1, "validation_loss: batches must be >= 1, got " << batches);
  Rng rng(seed);
  double total = 0;
  for (int i = 0; i < batches; ++i) {
    const Batch batch = task_.batch(rng, Split::kValidation, options_.micro_batch);
    total += model_.forward(acts_, batch.tokens.data(), batch.targets.data(), batch.batch,
                            batch.seq_len);
  }
  return static_cast<float>(total / batches);
}

double Trainer::accuracy(int examples, Split split, std::uint64_t seed) {
  BOOK_CHECK(examples >= 1, "accuracy: examples must be >= 1, got " << examples);
  Rng rng(seed);
  const int prompt = task_.prompt_length(), answer = task_.answer_length(),
            vocab = options_.model.vocab_size;
  int correct = 0;
  for (int done = 0; done < examples;) {
    const int b = std::min(options_.micro_batch, examples - done);
    std::vector<std::vector<int>> seqs;
    std::vector<std::int64_t> sums;
    for (int i = 0; i < b; ++i) {
      const auto [x, y] = task_.sample(rng, split);
      auto seq = task_.encode(x, y);
      seq.resize(prompt);
      seqs.push_back(seq);
      sums.push_back(x + y);
    }
    for (int k = 0; k < answer; ++k) {  // greedy: append the most likely token, run again
      const int len = prompt + k;
      std::vector<int> tokens;
      for (const auto& s : seqs) tokens.insert(tokens.end(), s.begin(), s.end());
      model_.forward(acts_, tokens.data(), nullptr, b, len);
      for (int i = 0; i < b; ++i) {
        const float* row = acts_.logits() + (static_cast<std::size_t>(i) * len + len - 1) * vocab;
        seqs[i].push_back(static_cast<int>(std::max_element(row, row + vocab) - row));
      }
    }
    for (int i = 0; i < b; ++i)
      correct += AdditionTask::decode_answer(seqs[i].data() + prompt, answer) == sums[i];
    done += b;
  }
  return static_cast<double>(correct) / examples;
}

std::int64_t Trainer::answer(std::int64_t a, std::int64_t b) {
  auto seq = task_.encode(a, b);
  const int prompt = task_.prompt_length(), vocab = options_.model.vocab_size;
  seq.resize(prompt);
  for (int k = 0; k < task_.answer_length(); ++k) {
    model_.forward(acts_, seq.data(), nullptr, 1, static_cast<int>(seq.size()));
    const float* row = acts_.logits() + (seq.size() - 1) * vocab;
    seq.push_back(static_cast<int>(std::max_element(row, row + vocab) - row));
  }
  return AdditionTask::decode_answer(seq.data() + prompt, task_.answer_length());
}

void Trainer::save(const std::string& path) const {
  BOOK_CHECK(!optimizer_,
             "save: this run steps an optimizer from TrainOptions::optimizer, whose "
             "state a checkpoint does not hold; checkpoint a run with AdamW");
  CheckpointWriter out;
  out.add_value("config", options_.model);
  out.add_value("precision", precision_code(options_.precision));
  out.add_value("step", step_);
  out.add_value("adam_step", adam_.step());
  const float* weights = mixed() ? master_.data() : model_.params().data();
  out.add_array<float>("weights", {weights, model_.layout().total()});
  out.add_array<float>("adam_m", adam_.m());
  out.add_array<float>("adam_v", adam_.v());
  out.add_array<std::uint64_t>("data_rng", data_rng_.state());
  out.add_value("loss_scale", scaler_.scale());
  out.add_value("loss_scale_clean_steps", static_cast<std::int32_t>(scaler_.clean_steps()));
  out.write_atomically(path);
}

namespace {

// A section of floats from `in`, checked to hold `count` finite values (and none below zero
// where `non_negative`): a NaN weight would make every later loss NaN.
std::vector<float> finite_section(const CheckpointReader& in, const std::string& path,
                                  const std::string& name, std::size_t count, bool non_negative) {
  std::vector<float> values(count);
  in.read_array<float>(name, std::span<float>(values));
  check_finite_section("checkpoint " + path, name, values, non_negative);
  return values;
}

}  // namespace

//! [load_all_or_nothing]
void Trainer::load(const std::string& path) {
  // The whole file is read and checked into temporaries first; the trainer changes only after
  // every section has passed, so a refused checkpoint leaves the run exactly as it was.
  BOOK_CHECK(!optimizer_,
             "load: this run steps an optimizer from TrainOptions::optimizer, whose "
             "state a checkpoint does not hold; load into a run with AdamW");
  const CheckpointReader in(path);
  const auto config = in.read_value<Config>("config");
  BOOK_CHECK(std::memcmp(&config, &options_.model, sizeof(Config)) == 0,
             "checkpoint " << path << " is of another model (" << config.n_layer
                           << " layers, d_model " << config.d_model << ", " << config.n_head
                           << " heads); this trainer has " << options_.model.n_layer << ", "
                           << options_.model.d_model << ", " << options_.model.n_head);
  const auto precision = in.read_value<std::int32_t>("precision");
  BOOK_CHECK(precision == precision_code(options_.precision),
             "checkpoint " << path << " was written by a run of precision code " << precision
                           << " (0 f32, 1 bf16, 2 f16); this trainer is "
                           << dtype_name(options_.precision) << " (code "
                           << precision_code(options_.precision) << ")");
  const auto step = in.read_value<std::int64_t>("step");
  const auto adam_step = in.read_value<std::int64_t>("adam_step");
  check_checkpoint_steps("checkpoint " + path, step, adam_step);
  const std::vector<float> weights = finite_section(in, path, "weights", master().size(), false);
  const std::vector<float> m = finite_section(in, path, "adam_m", adam_.m().size(), false);
  const std::vector<float> v = finite_section(in, path, "adam_v", adam_.v().size(), true);
  std::uint64_t state[4];
  in.read_array<std::uint64_t>("data_rng", std::span<std::uint64_t>(state, 4));
  check_data_rng_state("checkpoint " + path, std::span<const std::uint64_t, 4>(state, 4));
  const LossScaler scaler =
      restored_scaler("checkpoint " + path, scaler_, in.read_value<float>("loss_scale"),
                      in.read_value<std::int32_t>("loss_scale_clean_steps"));

  // Commit: nothing below can fail.
  step_ = step;
  adam_.set_step(adam_step);
  std::copy(weights.begin(), weights.end(), master().begin());
  std::copy(m.begin(), m.end(), adam_.m().begin());
  std::copy(v.begin(), v.end(), adam_.v().begin());
  data_rng_.set_state(std::span<const std::uint64_t, 4>(state, 4));
  scaler_ = scaler;
  if (mixed()) refresh_low_weights();
}
//! [load_all_or_nothing]

ModelWeights read_model_weights(const std::string& path) {
  const CheckpointReader in(path);
  ModelWeights model;
  model.config = in.read_value<Config>("config");
  model.config.validate();
  const auto code = in.read_value<std::int32_t>("precision");
  BOOK_CHECK(code >= 0 && code <= 2, "checkpoint " << path << " has an unknown precision code "
                                                   << code << " (0 f32, 1 bf16, 2 f16)");
  model.precision = code == 0 ? DType::kF32 : code == 1 ? DType::kBF16 : DType::kF16;
  model.step = in.read_value<std::int64_t>("step");
  model.weights.resize(ParameterLayout(model.config).total());
  in.read_array<float>("weights", std::span<float>(model.weights));  // checks the size
  return model;
}

MemoryReport Trainer::memory() const {
  MemoryReport r;
  r.parameters = static_cast<std::int64_t>(model_.layout().total());
  const std::size_t n = model_.layout().total();
  r.adam_moments = (adam_.m().size() + adam_.v().size()) * sizeof(float);
  if (mixed()) {
    r.master_weights = master_.size() * sizeof(float);
    r.low_weights = low_weights_.size() * sizeof(std::uint16_t);
    r.low_grads = low_grads_.size() * sizeof(std::uint16_t);
    r.emulation_scratch = 2 * n * sizeof(float);  // the float views of the 16-bit weights and grads
  } else {
    r.master_weights = n * sizeof(float);
    r.fp32_grads = n * sizeof(float);
  }
  r.activations = acts_.bytes();
  r.workspace = model_.workspace_bytes();
  return r;
}

}  // namespace book::train
