// Checks and fingerprint of a ZeRO run's options: chapter 5's, plus the stage and the shard count.
#include "chapters/06_zero/zero_options.h"

#include <string>

#include "chapters/04_training_baseline/model.h"
#include "chapters/05_data_parallel/ddp_options.h"
#include "common/check.h"

namespace book::zero {
namespace {

ddp::DdpOptions as_ddp(const ZeroOptions& options) {
  ddp::DdpOptions d;
  d.train = options.train;
  d.rung = ddp::Rung::kBuckets;
  d.bucket_bytes = options.bucket_bytes;
  return d;
}

}  // namespace

const char* stage_name(Stage stage) {
  switch (stage) {
    case Stage::kDdp:
      return "ddp";
    case Stage::kZero1:
      return "zero1";
    case Stage::kZero2:
      return "zero2";
    case Stage::kZero3:
      return "zero3";
  }
  return "?";
}

Stage parse_stage(std::string_view text) {
  for (Stage s : {Stage::kDdp, Stage::kZero1, Stage::kZero2, Stage::kZero3})
    if (text == stage_name(s) || text == std::to_string(static_cast<int>(s))) return s;
  BOOK_CHECK(false, "unknown ZeRO stage '"
                        << text << "' (valid: 0 or ddp, 1 or zero1, 2 or zero2, 3 or zero3)");
  return Stage::kDdp;  // not reached
}

ZeroOptions resolve(const ZeroOptions& options, int world_size) {
  const int stage = static_cast<int>(options.stage);
  BOOK_CHECK(stage >= 0 && stage <= 3,
             "ZeRO stage " << stage << " does not exist: pick 0 (DDP), 1, 2 or 3");
  ZeroOptions out = options;
  out.train = ddp::resolve(as_ddp(options), world_size).train;
  const std::size_t parameters = train::ParameterLayout(out.train.model).total();
  BOOK_CHECK(static_cast<std::size_t>(world_size) <= parameters,
             "ZeRO: " << world_size << " ranks but only " << parameters
                      << " parameters: some ranks would own no element to update; use at most "
                      << parameters << " ranks or a larger model");
  return out;
}

std::uint64_t fingerprint(const ZeroOptions& options) {
  const std::uint64_t base = ddp::fingerprint(as_ddp(options));
  return (base ^ static_cast<std::uint64_t>(options.stage)) * 0x100000001b3ULL;
}

}  // namespace book::zero
