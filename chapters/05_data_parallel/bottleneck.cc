// The bottleneck classifier's four rules over per-rank spans.
#include "chapters/05_data_parallel/bottleneck.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <utility>

#include "common/check.h"
#include "common/table.h"

namespace book::ddp {
namespace {

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

std::string percent(double share) { return fixed(100 * share, 0) + "%"; }

}  // namespace

const char* bottleneck_name(Bottleneck b) {
  switch (b) {
    case Bottleneck::kCompute:
      return "compute";
    case Bottleneck::kCommunication:
      return "communication";
    case Bottleneck::kData:
      return "data";
    case Bottleneck::kStraggler:
      return "straggler";
  }
  return "?";
}

RankSpans average_spans(std::span<const StepTimes> steps) {
  BOOK_CHECK(!steps.empty(), "average_spans: no steps to average");
  RankSpans mean;
  for (const StepTimes& t : steps) {
    mean.data += t.data;
    mean.compute += t.forward + t.backward + t.optimizer;
    mean.comm_wait += t.comm_wait;
    mean.step += t.step;
  }
  const double n = static_cast<double>(steps.size());
  mean.data /= n, mean.compute /= n, mean.comm_wait /= n, mean.step /= n;
  return mean;
}

//! [classify_bottleneck]
Diagnosis classify_bottleneck(std::span<const RankSpans> ranks) {
  BOOK_CHECK(!ranks.empty(), "classify_bottleneck: no ranks to classify");
  std::vector<double> own_work, waits, data_shares, comm_shares, compute_shares;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const RankSpans& s = ranks[r];
    BOOK_CHECK(s.step > 0 && std::isfinite(s.step), "classify_bottleneck: rank "
                                                        << r << "'s step time is " << s.step
                                                        << " s; it must be positive and finite");
    // A NaN share would reach std::sort (undefined) and a share outside [0, 1] would decide the
    // answer on a span that cannot be: each span is a part of the step.
    for (const auto& [name, span] : {std::pair{"data", s.data}, std::pair{"compute", s.compute},
                                     std::pair{"comm_wait", s.comm_wait}})
      BOOK_CHECK(span >= 0 && span <= s.step, "classify_bottleneck: rank "
                                                  << r << "'s " << name << " time is " << span
                                                  << " s; it must be between 0 and its step time "
                                                  << s.step << " s");
    own_work.push_back(s.data + s.compute);
    waits.push_back(s.comm_wait);
    data_shares.push_back(s.data / s.step);
    comm_shares.push_back(s.comm_wait / s.step);
    compute_shares.push_back(s.compute / s.step);
  }
  Diagnosis d;
  d.data_share = median(data_shares);
  d.comm_share = median(comm_shares);
  d.compute_share = median(compute_shares);
  const auto slowest = std::max_element(own_work.begin(), own_work.end()) - own_work.begin();
  const double typical = median(own_work);
  d.slowest_over_median = typical > 0 ? own_work[slowest] / typical : 1.0;
  const bool waits_least = waits[slowest] <= *std::min_element(waits.begin(), waits.end());
  std::ostringstream why;
  std::vector<double> steps;
  for (const RankSpans& s : ranks) steps.push_back(s.step);
  const bool clearly_slower = own_work[slowest] - typical >= kStragglerExcess * median(steps);
  if (ranks.size() > 1 && d.slowest_over_median >= kStragglerRatio && clearly_slower &&
      waits_least) {
    d.kind = Bottleneck::kStraggler;
    d.straggler = static_cast<int>(slowest);
    why << "rank " << slowest << " works " << fixed(d.slowest_over_median, 2)
        << "x the median rank and waits least; the others wait for it";
  } else if (d.data_share >= kDataShare) {
    d.kind = Bottleneck::kData;
    why << "the median rank loads data for " << percent(d.data_share)
        << " of its step (>= " << percent(kDataShare) << ")";
  } else if (d.comm_share >= kCommShare) {
    d.kind = Bottleneck::kCommunication;
    why << "the median rank waits on gradient collectives for " << percent(d.comm_share)
        << " of its step (>= " << percent(kCommShare) << ")";
  } else {
    d.kind = Bottleneck::kCompute;
    why << "compute is " << percent(d.compute_share) << " of the median step; data "
        << percent(d.data_share) << ", exposed communication " << percent(d.comm_share);
  }
  d.reason = why.str();
  return d;
}
//! [classify_bottleneck]

}  // namespace book::ddp
