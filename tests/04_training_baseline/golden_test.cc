// The golden record: hashes of short training runs (losses, gradient norms, loss scales, final
// weights, Adam moments) recorded on the code before the chapter was cut into public pieces. Every
// refactor of the training step must keep them bit for bit: a changed hash means a changed
// result, not a changed test.
//
// The bits depend on the GEMM micro-kernel chapter 1 picks at run time (AVX-512 where the CPU has
// it, else AVX2: they sum in different orders) and could depend on libm's exp and log. Thread
// counts do not change them (sgemm splits columns, never the sum over k): the test checks 1 and 2
// threads. A machine whose kernel has no recorded hash skips with a message saying so.
//
// They also depend on the compiler's optimisation: at -O2 GCC fuses a * b + c into one FMA
// (-ffp-contract=fast is its default for C++, and -march=x86-64-v3 has FMA), at -O0 it does not,
// so a `-c dbg` build rounds differently. The record is of the book's default build (-c opt);
// unoptimised and sanitizer builds skip.
//
// It links the reference exercise bodies (train_reference), so it passes on both tracks.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "chapters/01_gemm_cpu/sgemm.h"
#include "chapters/04_training_baseline/checkpoint.h"
#include "chapters/04_training_baseline/trainer.h"

namespace book::train {
namespace {

// Feeds the bytes of values into one running FNV-1a hash.
class Hash {
 public:
  void add(const void* data, std::size_t bytes) {
    const auto* p = static_cast<const std::uint8_t*>(data);
    for (std::size_t i = 0; i < bytes; ++i) {
      state_ ^= p[i];
      state_ *= 0x100000001b3ULL;
    }
  }
  template <typename T>
  void add_value(const T& value) {
    add(&value, sizeof(T));
  }
  std::uint64_t value() const { return state_; }

 private:
  std::uint64_t state_ = 0xcbf29ce484222325ULL;
};

struct Golden {
  std::uint64_t losses;   // every StepResult field of every step, then the validation loss
  std::uint64_t weights;  // the model's weights, then the checkpoint's weights, adam_m, adam_v
  int skipped = 0;        // steps the loss scaler skipped (not part of the record)
};

TrainOptions golden_options(DType precision, int accumulation) {
  TrainOptions o;
  o.digits = 2;
  o.model.n_layer = 2;
  o.model.n_head = 2;
  o.model.d_model = 16;
  o.micro_batch = 8;
  o.accumulation = accumulation;
  o.total_steps = 40;
  o.warmup_steps = 4;
  o.precision = precision;
  o.seed = 2024;
  if (precision == DType::kF16) {
    // Start above FP16's range so the first steps overflow and are skipped, then grow again
    // every 2 clean steps: both of the scaler's paths run.
    o.scaler.initial_scale = o.scaler.max_scale = 16777216.0f;
    o.scaler.growth_interval = 2;
  }
  return o;
}

Golden run(const TrainOptions& options, int steps) {
  Trainer trainer(options);
  Hash losses, weights;
  int skipped = 0;
  for (int i = 0; i < steps; ++i) {
    const StepResult r = trainer.step();
    losses.add_value(r.step);
    losses.add_value(r.loss);
    losses.add_value(r.grad_norm);
    losses.add_value(r.lr);
    losses.add_value(static_cast<std::uint8_t>(r.skipped));
    skipped += r.skipped;
    losses.add_value(r.loss_scale);
  }
  losses.add_value(trainer.validation_loss(2));
  weights.add(trainer.model().params().data(), trainer.model().params().size() * sizeof(float));
  const std::string path = ::testing::TempDir() + "/ch04_golden.ckpt";
  trainer.save(path);
  const CheckpointReader checkpoint(path);
  for (const char* section : {"weights", "adam_m", "adam_v"}) {
    const auto bytes = checkpoint.get(section);
    weights.add(bytes.data(), bytes.size());
  }
  std::remove(path.c_str());
  return {losses.value(), weights.value(), skipped};
}

struct Case {
  const char* name;
  TrainOptions options;
  int steps;
  Golden avx512, avx2;  // 0: not recorded
};

std::vector<Case> cases() {
  TrainOptions stage;  // the stage's model (d_model 64, 32 sequences): sgemm threads its products
  stage.micro_batch = 32;
  stage.total_steps = 100;
  stage.warmup_steps = 5;
  return {
      {"fp32",
       golden_options(DType::kF32, 1),
       8,
       {0x9d2e6b764fa9cadaULL, 0x53e5b099be7f676bULL},
       {0, 0}},
      {"fp32 accumulation 3",
       golden_options(DType::kF32, 3),
       6,
       {0x6f41d2b703366267ULL, 0x83bd884b8a49bd16ULL},
       {0, 0}},
      {"bf16 accumulation 2",
       golden_options(DType::kBF16, 2),
       6,
       {0x17b64c18616ba287ULL, 0x06ba154700cc4d5eULL},
       {0, 0}},
      {"fp16 accumulation 2",
       golden_options(DType::kF16, 2),
       10,
       {0x8e27326f63ca9ad4ULL, 0x563bffd39ba83557ULL},
       {0, 0}},
      {"fp32 stage model", stage, 3, {0x03910baded487533ULL, 0x32c5d1e5738318d9ULL}, {0, 0}},
  };
}

// Whether this binary was built the way the record was (-O2, no sanitizer).
constexpr bool kRecordedBuild =
#if defined(__OPTIMIZE__) && !defined(__OPTIMIZE_SIZE__) && !defined(__SANITIZE_ADDRESS__) && \
    !defined(__SANITIZE_THREAD__)
    true;
#else
    false;
#endif

TEST(Golden, TrainingRunsAreBitIdenticalToTheRecord) {
  if (!kRecordedBuild)
    GTEST_SKIP() << "the golden record is of the default optimised build (-c opt: -O2, which "
                    "fuses multiply-adds); this build rounds differently, so it is not compared";
  const bool avx512 = __builtin_cpu_supports("avx512f");
  const char* kernel = avx512 ? "AVX-512" : "AVX2";
  for (const Case& c : cases()) {
    const Golden& want = avx512 ? c.avx512 : c.avx2;
    for (int threads : {1, 2}) {
      const book::gemm::SgemmThreads scope(threads);
      const Golden got = run(c.options, c.steps);
      std::printf("golden %-22s %s kernel, %d thread(s): losses 0x%016llx weights 0x%016llx\n",
                  c.name, kernel, threads, static_cast<unsigned long long>(got.losses),
                  static_cast<unsigned long long>(got.weights));
      if (c.options.precision == DType::kF16) {
        EXPECT_GT(got.skipped, 0) << c.name << ": the record must include skipped steps";
        EXPECT_LT(got.skipped, c.steps) << c.name << ": the record must include applied steps";
      }
      if (want.losses == 0) continue;
      EXPECT_EQ(got.losses, want.losses)
          << c.name << " with sgemm's " << kernel << " kernel on " << threads
          << " thread(s): the losses, gradient norms or loss scales changed";
      EXPECT_EQ(got.weights, want.weights)
          << c.name << " with sgemm's " << kernel << " kernel on " << threads
          << " thread(s): the trained weights or Adam moments changed";
    }
  }
  for (const Case& c : cases())
    if ((avx512 ? c.avx512 : c.avx2).losses == 0)
      GTEST_SKIP() << "no golden hash is recorded for sgemm's " << kernel
                   << " kernel (this CPU's); the hashes printed above are this machine's. The "
                      "record was made on an AVX-512 machine.";
}

}  // namespace
}  // namespace book::train
