// Graded tests of AdamW over ranges of the flat buffer (train.adamw_step underneath): the update
// of shards, cut anywhere (inside tensors too), equals the whole-buffer update bit for bit, and
// weight decay follows the layout element by element.
#include <cstring>
#include <string>
#include <vector>

#include "chapters/04_training_baseline/adamw_state.h"
#include "common/rng.h"
#include "common/testing/exercise.h"

namespace book::train {
namespace {

Config small_config() {
  Config c;
  c.vocab_size = 12;
  c.context = 5;
  c.n_layer = 2;
  c.n_head = 2;
  c.d_model = 6;
  return c;
}

std::vector<float> random_floats(std::size_t n, Rng& rng, double scale) {
  std::vector<float> v(n);
  for (auto& x : v) x = static_cast<float>(rng.uniform(-scale, scale));
  return v;
}

// What the trainer did before the step was cut into pieces: one adamw_step per tensor slot,
// with the slot's decay flag.
void per_slot_reference(const ParameterLayout& layout, std::vector<float>& params,
                        const std::vector<float>& grads, std::vector<float>& m,
                        std::vector<float>& v, std::int64_t step, float lr, AdamWConfig config) {
  for (const auto& slot : layout.slots()) {
    AdamWConfig c = config;
    if (!slot.decay) c.weight_decay = 0;
    adamw_step({params.data() + slot.offset, slot.size()},
               {grads.data() + slot.offset, slot.size()}, {m.data() + slot.offset, slot.size()},
               {v.data() + slot.offset, slot.size()}, step, lr, c);
  }
}

void expect_same_bits(const std::string& what, std::span<const float> want,
                      std::span<const float> got, std::size_t offset = 0) {
  ASSERT_EQ(want.size(), got.size()) << what;
  for (std::size_t i = 0; i < want.size(); ++i)
    ASSERT_EQ(std::memcmp(&want[i], &got[i], sizeof(float)), 0)
        << what << ": flat element " << offset + i << " is " << got[i] << ", the whole-buffer "
        << "update gave " << want[i] << " (must be bit-identical)";
}

EXERCISE_TEST("train.adamw_step", AdamWRange, ShardsEqualTheWholeBufferBitForBit) {
  const ParameterLayout layout(small_config());
  const std::size_t n = layout.total();
  Rng rng(31);
  const std::vector<float> start = random_floats(n, rng, 1.0);
  std::vector<std::vector<float>> grads;
  for (int step = 0; step < 3; ++step) grads.push_back(random_floats(n, rng, 1e-2));
  const AdamWConfig config{0.9f, 0.95f, 1e-8f, 0.1f};

  // The whole buffer as one range, and the per-slot loop the trainer ran before.
  std::vector<float> whole = start, reference = start, m_ref(n, 0.0f), v_ref(n, 0.0f);
  AdamWState whole_state(0, n);
  for (int step = 0; step < 3; ++step) {
    const float lr = 1e-3f * static_cast<float>(step + 1);
    adamw_update(layout, whole_state, whole, grads[step], lr, config);
    per_slot_reference(layout, reference, grads[step], m_ref, v_ref, step + 1, lr, config);
  }
  expect_same_bits("whole range vs per-slot loop", reference, whole);
  expect_same_bits("m, whole range vs per-slot loop", m_ref, whole_state.m());
  EXPECT_EQ(whole_state.step(), 3);

  // Cut points inside tensors: inside wte, inside h0.w_qkv, between a gain and its bias, inside
  // the final LayerNorm; and an uneven 3-way split like ZeRO's ceil(n / 3).
  const std::size_t qkv = layout.find("h0.w_qkv").offset, ln2 = layout.find("h1.ln2_bias").offset;
  const std::vector<std::vector<std::size_t>> cut_sets = {
      {0, 7, qkv + 5, ln2, n - 3, n},
      {0, (n + 2) / 3, 2 * ((n + 2) / 3), n},
      {0, 1, n - 1, n},
  };
  for (const auto& cuts : cut_sets) {
    std::vector<float> sharded = start;
    for (std::size_t s = 0; s + 1 < cuts.size(); ++s) {
      const std::size_t begin = cuts[s], end = cuts[s + 1];
      AdamWState state(begin, end);  // each "rank" owns only its slice of m and v
      std::span<float> params(sharded.data() + begin, end - begin);
      for (int step = 0; step < 3; ++step)
        adamw_update(layout, state, params,
                     std::span<const float>(grads[step].data() + begin, end - begin),
                     1e-3f * static_cast<float>(step + 1), config);
      SCOPED_TRACE("shard [" + std::to_string(begin) + ", " + std::to_string(end) + ")");
      expect_same_bits("m of the shard", whole_state.m().subspan(begin, end - begin), state.m(),
                       begin);
      expect_same_bits("v of the shard", whole_state.v().subspan(begin, end - begin), state.v(),
                       begin);
    }
    expect_same_bits("parameters after sharded updates", whole, sharded);
  }
}

EXERCISE_TEST("train.adamw_step", AdamWRange, WeightDecayFollowsTheLayoutElementByElement) {
  // A zero gradient leaves only the decay: p -= lr · wd · p where the layout says decay, p
  // unchanged elsewhere. The range starts inside wte and ends inside h0's first LayerNorm bias.
  const ParameterLayout layout(small_config());
  const std::size_t begin = 5, end = layout.find("h0.ln1_bias").offset + 2;
  Rng rng(32);
  std::vector<float> params = random_floats(end - begin, rng, 1.0);
  const std::vector<float> before = params, zero(end - begin, 0.0f);
  AdamWState state(begin, end);
  const float lr = 0.1f;
  adamw_update(layout, state, params, zero, lr, AdamWConfig{0.9f, 0.95f, 1e-8f, 0.5f});
  int decayed = 0, kept = 0;
  for (std::size_t i = 0; i < params.size(); ++i) {
    const std::size_t element = begin + i;
    const float want = layout.decays(element) ? before[i] - lr * (0.5f * before[i]) : before[i];
    ASSERT_FLOAT_EQ(params[i], want)
        << "flat element " << element << " (decays: " << layout.decays(element) << ", was "
        << before[i] << ")";
    (layout.decays(element) ? decayed : kept)++;
  }
  EXPECT_GT(decayed, 0);
  EXPECT_EQ(kept, 6 + 2) << "h0.ln1_gain (6) and two elements of h0.ln1_bias are not decayed";
}

}  // namespace
}  // namespace book::train
