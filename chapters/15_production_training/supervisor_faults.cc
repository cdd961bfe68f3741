// The supervisor's faults and the watchdog's verdict (supervisor.h): names, seeded schedules.
#include <algorithm>
#include <sstream>

#include "chapters/15_production_training/supervisor.h"
#include "common/check.h"
#include "common/rng.h"

namespace book::prod {
namespace {

constexpr const char* kFaultNames[] = {"kill", "hang", "corrupt", "disk-full"};

}  // namespace

std::string hang_verdict(double timeout_s, const std::vector<std::int64_t>& done) {
  const std::int64_t after = *std::min_element(done.begin(), done.end());
  std::vector<int> stopped;
  for (std::size_t r = 0; r < done.size(); ++r)
    if (done[r] == after) stopped.push_back(static_cast<int>(r));
  std::ostringstream what;
  what << "hung: no heartbeat for " << timeout_s << " s; rank" << (stopped.size() > 1 ? "s " : " ");
  for (std::size_t i = 0; i < stopped.size(); ++i) what << (i ? ", " : "") << stopped[i];
  what << " stopped after step " << after;
  return what.str();
}

const char* fault_name(FaultKind kind) { return kFaultNames[static_cast<int>(kind)]; }

FaultKind parse_fault(const std::string& text) {
  for (int k = 0; k < 4; ++k)
    if (text == kFaultNames[k]) return static_cast<FaultKind>(k);
  BOOK_CHECK(false,
             "unknown fault '" << text << "'; the faults are kill, hang, corrupt, disk-full");
}

std::vector<Fault> seeded_faults(std::uint64_t seed, int count, std::int64_t steps, int ranks,
                                 const std::vector<FaultKind>& kinds) {
  BOOK_CHECK(!kinds.empty(), "seeded_faults: no kinds of fault to draw from");
  BOOK_CHECK(count >= 0 && count <= steps - 1 && ranks >= 1,
             "seeded_faults: " << count << " faults at distinct steps 2.." << steps << " on "
                               << ranks << " ranks do not fit; use fewer faults or more steps");
  Rng rng(seed);
  std::vector<Fault> faults;
  while (static_cast<int>(faults.size()) < count) {
    const std::int64_t step = 2 + static_cast<std::int64_t>(rng.next_u64() % (steps - 1));
    if (std::any_of(faults.begin(), faults.end(), [&](const Fault& f) { return f.step == step; }))
      continue;
    const FaultKind kind = kinds[faults.size() % kinds.size()];
    faults.push_back({kind, step, static_cast<int>(rng.next_u64() % ranks)});
  }
  std::sort(faults.begin(), faults.end(),
            [](const Fault& a, const Fault& b) { return a.step < b.step; });
  return faults;
}

}  // namespace book::prod
