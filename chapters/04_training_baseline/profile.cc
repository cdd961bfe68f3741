#include "chapters/04_training_baseline/profile.h"

#include <chrono>

#include "common/check.h"

namespace book::train {
namespace {

thread_local LayerProfile* t_profile = nullptr;

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

LayerProfile::LayerProfile() {
  BOOK_CHECK(t_profile == nullptr,
             "LayerProfile: this thread already records into another profile; destroy it first");
  t_profile = this;
}

LayerProfile::~LayerProfile() { t_profile = nullptr; }

void LayerProfile::add(const char* name, double seconds) {
  for (Entry& entry : entries_)
    if (entry.name == name) {
      entry.seconds += seconds;
      entry.calls += 1;
      return;
    }
  entries_.push_back({name, seconds, 1});
}

LayerScope::LayerScope(const char* name) : profile_(t_profile), name_(name) {
  if (profile_) start_ns_ = now_ns();
}

LayerScope::~LayerScope() {
  if (profile_) profile_->add(name_, static_cast<double>(now_ns() - start_ns_) * 1e-9);
}

}  // namespace book::train
