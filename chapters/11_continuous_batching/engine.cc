#include "chapters/11_continuous_batching/engine.h"

#include <algorithm>

#include "common/check.h"

namespace book::serve {

Engine::Engine(kv::ModelRunner& runner, kv::BlockManager& blocks, const SchedulerConfig& config)
    : runner_(runner), scheduler_(blocks, config, runner.config().context) {
  BOOK_CHECK(blocks.block_size() == runner.cache().block_size() &&
                 blocks.num_blocks() == runner.cache().num_blocks(),
             "Engine: the block manager has " << blocks.num_blocks() << " blocks of "
                                              << blocks.block_size() << ", the runner's cache "
                                              << runner.cache().num_blocks() << " of "
                                              << runner.cache().block_size());
  BOOK_CHECK(runner.max_rows() >= config.token_budget,
             "Engine: the runner takes " << runner.max_rows() << " rows per step, below the token "
                                         << "budget of " << config.token_budget
                                         << "; make the runner with max_rows >= the budget");
  // The host arena copies FP32 rows (LayerKvView); an INT8 cache has none to give it.
  BOOK_CHECK(config.preemption != PreemptionMode::kSwap ||
                 runner.cache().precision() == kv::KvPrecision::kF32,
             "Engine: preemption by swap copies FP32 keys and values to the host, but the runner's "
             "cache is "
                 << kv::kv_precision_name(runner.cache().precision())
                 << "; serve it with PreemptionMode::kRecompute");
  if (config.preemption == PreemptionMode::kSwap)
    host_.emplace(runner.cache().shape(), config.host_blocks, runner.cache().block_size());
}

void Engine::check_request(const GenerationRequest& request) const {
  check_sampling(request.sampling);
  const int vocab = runner_.config().vocab_size;
  for (const int token : request.prompt)
    BOOK_CHECK(token >= 0 && token < vocab, "Engine::submit: prompt token "
                                                << token << " is outside the vocabulary [0, "
                                                << vocab << ")");
  for (const int token : request.stop_tokens)
    BOOK_CHECK(token >= 0 && token < vocab, "Engine::submit: stop token "
                                                << token << " is outside the vocabulary [0, "
                                                << vocab << ")");
}

RequestId Engine::submit(const GenerationRequest& request) {
  check_request(request);
  const RequestId id = scheduler_.add(request.prompt, request.max_tokens);
  requests_.emplace(id, request);
  return id;
}

std::optional<std::pair<RequestId, kv::Admission>> Engine::admit_prefilled(
    const GenerationRequest& request, int first_token) {
  check_request(request);
  const int vocab = runner_.config().vocab_size;
  BOOK_CHECK(first_token >= 0 && first_token < vocab,
             "Engine::admit_prefilled: first token "
                 << first_token << " is outside the vocabulary [0, " << vocab << ")");
  auto admitted = scheduler_.add_prefilled(request.prompt, first_token, request.max_tokens);
  if (!admitted) return std::nullopt;
  requests_.emplace(admitted->first, request);
  first_token_step_[admitted->first] = steps_;  // sampled before this engine's next step
  return admitted;
}

//! [engine_step]
StepRecord Engine::step() {
  StepRecord record;
  record.step = ++steps_;
  const StepPlan plan = scheduler_.schedule();
  // Swaps first (resumed requests in, this step's victims out), before anything is written.
  for (const SwapCopy& copy : plan.swapped_in) bytes_in_ += host_->swap_in(runner_.cache(), copy);
  for (const SwapCopy& copy : plan.swapped_out)
    bytes_out_ += host_->swap_out(runner_.cache(), copy);
  for (const kv::BlockCopy& copy : plan.copies) runner_.cache().copy(copy);
  // One model step over every scheduled chunk: decodes and prefill chunks side by side.
  std::vector<kv::SequenceChunk> chunks;
  for (const ScheduledChunk& c : plan.chunks) {
    const Sequence& sequence = scheduler_.sequence(c.id);
    chunks.push_back({std::span(sequence.tokens).subspan(c.start, c.count), c.start,
                      scheduler_.blocks().block_table(c.id)});
    (c.decode ? record.decode_rows : record.prefill_rows) += c.count;
    record.prefill_chunks += c.decode ? 0 : 1;
  }
  record.used_blocks = scheduler_.blocks().num_used_blocks();
  const std::span<const float> logits = runner_.run(chunks);
  const int vocab = runner_.config().vocab_size;
  std::vector<int> sampled;
  std::vector<RequestId> samplers;
  for (std::size_t i = 0; i < plan.chunks.size(); ++i) {
    if (!plan.chunks[i].samples) continue;
    const RequestId id = plan.chunks[i].id;
    const GenerationRequest& request = requests_.at(id);
    const int index = scheduler_.sequence(id).generated();  // token number, for its seed
    sampled.push_back(sample_top_p(logits.subspan(i * vocab, vocab), request.sampling,
                                   sampling_uniform(request.sampling.seed, index)));
    samplers.push_back(id);
  }
  scheduler_.record(plan, sampled);
  // Retire what finished: max_tokens reached or a stop token sampled.
  for (std::size_t i = 0; i < samplers.size(); ++i) {
    const RequestId id = samplers[i];
    const GenerationRequest& request = requests_.at(id);
    const Sequence& sequence = scheduler_.sequence(id);
    const bool stop = std::find(request.stop_tokens.begin(), request.stop_tokens.end(),
                                sampled[i]) != request.stop_tokens.end();
    const bool done = stop || sequence.generated() == request.max_tokens;
    if (sequence.generated() == 1) first_token_step_[id] = steps_;
    if (callback_) callback_(id, sampled[i], done);
    if (!done) continue;
    Completion completion;
    completion.id = id;
    completion.tokens.assign(sequence.tokens.begin() + sequence.prompt_tokens,
                             sequence.tokens.end());
    completion.reason = stop ? FinishReason::kStop : FinishReason::kLength;
    completion.preemptions = sequence.preemptions;
    completion.first_token_step = first_token_step_.at(id);
    completion.finish_step = steps_;
    scheduler_.finish(id);
    requests_.erase(id);
    first_token_step_.erase(id);
    finished_.emplace(id, std::move(completion));
    ++record.finished;
  }
  record.preempted = static_cast<int>(plan.preempted.size());
  record.swapped_out = static_cast<int>(plan.swapped_out.size());
  record.swapped_in = static_cast<int>(plan.swapped_in.size());
  record.running = static_cast<int>(scheduler_.state().running.size());
  record.waiting = static_cast<int>(scheduler_.state().waiting.size());
  return record;
}
//! [engine_step]

std::vector<Completion> Engine::run() {
  while (has_work()) step();
  return take_finished();
}

bool Engine::cancel(RequestId id) {
  if (!requests_.contains(id) || !scheduler_.cancel(id)) return false;
  requests_.erase(id);
  first_token_step_.erase(id);
  return true;
}

std::vector<Completion> Engine::take_finished() {
  std::vector<Completion> out;
  for (auto& [id, completion] : finished_) out.push_back(std::move(completion));
  finished_.clear();
  return out;
}

}  // namespace book::serve
