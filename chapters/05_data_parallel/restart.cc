// The restart driver for thread ranks: attempt, fail, resume from the last checkpoint.
#include "chapters/05_data_parallel/restart.h"

#include <filesystem>
#include <mutex>

#include "chapters/03_collectives/threads.h"
#include "chapters/04_training_baseline/checkpoint.h"
#include "chapters/05_data_parallel/ddp_trainer.h"
#include "common/check.h"

namespace book::ddp {

//! [train_with_restarts]
RestartReport train_with_restarts(const RestartOptions& options) {
  BOOK_CHECK(options.steps >= 1 && options.checkpoint_every >= 1 && options.max_restarts >= 0,
             "train_with_restarts: steps and checkpoint_every must be >= 1 and max_restarts >= 0, "
             "got "
                 << options.steps << ", " << options.checkpoint_every << ", "
                 << options.max_restarts);
  BOOK_CHECK(!options.checkpoint_path.empty(), "train_with_restarts: no checkpoint path given");
  // Start from scratch, not from an old run: an earlier run's checkpoint is removed, but only a
  // checkpoint (chapter 4's reader verifies it): anything else at the path is refused, not deleted.
  const std::string& path = options.checkpoint_path;
  std::error_code error;
  const auto status = std::filesystem::symlink_status(path, error);
  if (std::filesystem::exists(status)) {
    BOOK_CHECK(std::filesystem::is_regular_file(status),
               "train_with_restarts: the checkpoint path " << path << " is a folder or another "
                                                             "non-file; name a file path");
    try {
      const train::CheckpointReader earlier(path);
    } catch (const Error& why) {
      BOOK_CHECK(false, "train_with_restarts: " << path << " is not a checkpoint this run may "
                                                << "replace (" << why.what()
                                                << "); move it or name another path");
    }
    std::filesystem::remove(path);
  }
  RestartReport report;
  report.losses.assign(static_cast<std::size_t>(options.steps), 0.0f);
  DdpOptions ddp = options.ddp;
  coll::ThreadsOptions threads;
  threads.timeout = options.timeout;
  for (int attempt = 0;; ++attempt) {
    const bool resume = std::filesystem::exists(options.checkpoint_path);
    std::int64_t resumed_at = 0;
    try {
      coll::run_ranks(
          options.world_size,
          [&](coll::Communicator& comm) {
            DdpTrainer trainer(comm, ddp);
            if (resume) trainer.load(options.checkpoint_path);
            if (comm.rank() == 0) resumed_at = trainer.steps_done();
            while (trainer.steps_done() < options.steps) {
              const train::StepResult result = trainer.step();
              if (comm.rank() == 0)
                report.losses[static_cast<std::size_t>(result.step - 1)] = result.loss;
              if (trainer.steps_done() % options.checkpoint_every == 0)
                trainer.save(options.checkpoint_path);
            }
            if (comm.rank() == 0) {
              const auto w = trainer.master_weights();
              report.final_weights.assign(w.begin(), w.end());
            }
          },
          threads);
      if (attempt > 0) report.resumed_from.push_back(resumed_at);
      return report;
    } catch (const NotImplemented&) {
      throw;  // an unwritten exercise is not a failure to recover from
    } catch (const Error& failure) {
      if (attempt > 0) report.resumed_from.push_back(resumed_at);
      report.failures.push_back(failure.what());
      BOOK_CHECK(attempt < options.max_restarts, "train_with_restarts: gave up after "
                                                     << attempt + 1 << " failed attempts; the "
                                                     << "last: " << failure.what());
      ++report.restarts;
      ddp.faults.fail_rank = -1;  // the broken rank is replaced; the run itself is unchanged
    }
  }
}
//! [train_with_restarts]

}  // namespace book::ddp
