#include "common/testing/exercise_reporter.h"

#include "common/track.h"

#include <pthread.h>

#include <algorithm>
#include <iostream>
#include <sstream>
#include <utility>

namespace book::testing {

namespace {

std::string exercise_property(const ::testing::TestResult& result) {
  for (int i = 0; i < result.test_property_count(); ++i)
    if (std::string(result.GetTestProperty(i).key()) == "exercise")
      return result.GetTestProperty(i).value();
  return "";
}

std::string thread_name() {
  char name[64] = "";
  pthread_getname_np(pthread_self(), name, sizeof name);
  return name;
}

// What a finished test says about its exercise, from its result.
ExerciseOutcome outcome_of(const ::testing::TestResult& result) {
  if (result.Failed()) return ExerciseOutcome::kFailing;
  if (!result.Skipped()) return ExerciseOutcome::kDone;
  for (int i = 0; i < result.total_part_count(); ++i) {
    const std::string message = result.GetTestPartResult(i).message();
    if (message.find("is not started") != std::string::npos) return ExerciseOutcome::kNotStarted;
    if (message.find("needs a GPU") != std::string::npos) return ExerciseOutcome::kNeedsGpu;
  }
  return ExerciseOutcome::kNotSelected;
}

// Which outcome an exercise ends with over several tests: failing beats not started beats the
// rest; done only when every test of it passed.
int rank(ExerciseOutcome o) {
  switch (o) {
    case ExerciseOutcome::kFailing:
      return 4;
    case ExerciseOutcome::kNotStarted:
      return 3;
    case ExerciseOutcome::kNeedsGpu:
      return 2;
    case ExerciseOutcome::kNotSelected:
      return 1;
    case ExerciseOutcome::kDone:
      return 0;
  }
  return 0;
}

}  // namespace

std::string chapter_of_test_target(const std::string& label) {
  const std::string prefix = "//tests/";
  if (label.rfind(prefix, 0) != 0) return "";
  const auto end = label.find_first_of("/:", prefix.size());
  return label.substr(prefix.size(),
                      end == std::string::npos ? std::string::npos : end - prefix.size());
}

std::string exercise_summary(const std::vector<std::pair<std::string, ExerciseOutcome>>& outcomes,
                             const std::vector<Exercise>& catalog) {
  std::ostringstream out;
  int not_started = 0;
  std::string chapter;
  std::size_t width = 0;
  for (const auto& [id, outcome] : outcomes) width = std::max(width, id.size());
  out << "\nExercises graded by this test (" << track_name() << " track"
      << (exercise_track() ? "" : ": the reference solutions; --config=exercises grades yours")
      << "):\n";
  for (const auto& [id, outcome] : outcomes) {
    const std::string padded = id + std::string(width - id.size(), ' ');
    const Exercise* e = nullptr;
    for (const auto& candidate : catalog)
      if (candidate.id == id) e = &candidate;
    if (e != nullptr) chapter = e->chapter;
    const std::string name = e != nullptr ? "  " + e->problem : "";
    const std::string shown = e != nullptr ? padded : id;
    switch (outcome) {
      case ExerciseOutcome::kDone:
        out << "  done          " << shown << name << "\n";
        break;
      case ExerciseOutcome::kFailing:
        out << "  FAILING       " << shown << name;
        if (e != nullptr) out << " (read " << e->readme() << ", section \"" << e->section << "\")";
        out << "\n";
        break;
      case ExerciseOutcome::kNotStarted:
        ++not_started;
        out << "  not started   " << shown << name;
        if (e != nullptr) out << " (write it in " << e->file_list() << ")";
        out << "\n";
        break;
      case ExerciseOutcome::kNeedsGpu:
        out << "  needs a GPU   " << shown << name << "\n";
        break;
      case ExerciseOutcome::kNotSelected:
        out << "  not selected  " << shown << name << "\n";
        break;
    }
  }
  if (not_started > 0)
    out << not_started << (not_started == 1 ? " exercise is" : " exercises are")
        << " not started: a stub is never a pass, so this test exits with status 1 until every "
           "exercise it grades is written.\n";
  if (exercise_track())
    out << "Your progress, with hints: bazel run //tools:progress"
        << (chapter.empty() ? "" : " -- " + chapter.substr(0, 2)) << "\n";
  return out.str();
}

ExerciseReporter::ExerciseReporter(std::unique_ptr<::testing::TestEventListener> printer,
                                   std::vector<Exercise> catalog, std::string main_thread_name)
    : printer_(std::move(printer)),
      catalog_(std::move(catalog)),
      main_thread_name_(std::move(main_thread_name)) {}

const Exercise* ExerciseReporter::find(const std::string& id) const {
  for (const auto& e : catalog_)
    if (e.id == id) return &e;
  return nullptr;
}

int ExerciseReporter::not_started() const {
  std::lock_guard lock(mutex_);
  int n = 0;
  for (const auto& [id, outcome] : outcome_) n += outcome == ExerciseOutcome::kNotStarted;
  return n;
}

std::vector<std::pair<std::string, ExerciseOutcome>> ExerciseReporter::outcomes() const {
  std::lock_guard lock(mutex_);
  std::vector<std::pair<std::string, ExerciseOutcome>> out;
  for (const auto& id : order_) out.emplace_back(id, outcome_.at(id));
  return out;
}

void ExerciseReporter::OnTestStart(const ::testing::TestInfo& info) {
  {
    std::lock_guard lock(mutex_);
    failures_in_test_ = 0;
    current_ = &info;
  }
  printer_->OnTestStart(info);
}

void ExerciseReporter::OnTestPartResult(const ::testing::TestPartResult& result) {
  std::lock_guard lock(mutex_);
  if (result.skipped()) {
    // A stub's "not started" is summarised once at the end; other skips (no GPU) are shown.
    const std::string message = result.message();
    if (message.find("is not started") == std::string::npos &&
        message.find("not selected") == std::string::npos)
      printer_->OnTestPartResult(result);
    return;
  }
  if (!result.failed()) return printer_->OnTestPartResult(result);
  ++failures_in_test_;
  if (failures_in_test_ == 1) {
    // Not UnitTest::current_test_info(): gtest calls this listener holding the lock that takes.
    const std::string id = current_ != nullptr ? exercise_property(*current_->result()) : "";
    if (!id.empty()) {
      std::cout << ">>> exercise " << id;
      if (const Exercise* e = find(id))
        std::cout << " (" << e->problem << ") fails here. Read " << e->readme() << ", section \""
                  << e->section << "\"; a hint: bazel run //tools:progress -- --hint " << id;
      std::cout << "\n";
    }
  }
  if (failures_in_test_ > kShownFailures) return;  // counted, reported at the end of the test
  const std::string thread = thread_name();
  if (!thread.empty() && thread != main_thread_name_)
    std::cout << ">>> on thread \"" << thread << "\":\n";
  std::cout << std::flush;
  printer_->OnTestPartResult(result);
}

void ExerciseReporter::OnTestEnd(const ::testing::TestInfo& info) {
  {
    std::lock_guard lock(mutex_);
    if (failures_in_test_ > kShownFailures)
      std::cout << ">>> ... and " << failures_in_test_ - kShownFailures
                << " more failures in this test, not shown (the first ones say what went wrong; "
                   "all are in the test's XML)\n";
    const std::string id = exercise_property(*info.result());
    if (!id.empty()) {
      const ExerciseOutcome now = outcome_of(*info.result());
      const auto [it, fresh] = outcome_.emplace(id, now);
      if (fresh)
        order_.push_back(id);
      else if (rank(now) > rank(it->second))
        it->second = now;
    }
  }
  printer_->OnTestEnd(info);
}

void ExerciseReporter::OnTestIterationEnd(const ::testing::UnitTest& u, int iteration) {
  printer_->OnTestIterationEnd(u, iteration);
  std::cout << exercise_summary(outcomes(), catalog_) << std::flush;
}

}  // namespace book::testing
