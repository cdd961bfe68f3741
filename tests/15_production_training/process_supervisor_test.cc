// Scaffolding: the supervisor for MPI processes (mpirun + :train_worker). A job killed, hung
// (SIGKILLed by the supervisor after the heartbeat timeout), with its newest checkpoint
// corrupted, and with a checkpoint write cut short by RLIMIT_FSIZE (a real EFBIG), ends with the
// weights of an uninterrupted job of the same N bit for bit, and redoes exactly the steps
// restart_plan predicted. Links the reference restart_plan: it passes on both tracks.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "chapters/15_production_training/process_supervisor.h"
#include "common/testing/expect_error.h"

namespace book::prod {
namespace {

std::string env(const char* name, const char* otherwise) {
  const char* value = std::getenv(name);
  return value ? value : otherwise;
}

// As chapters/03_collectives/testing/mpirun.sh: OpenMPI's session files and shared memory under
// the test's own folder (the sandbox has no writable /tmp and a private /dev/shm).
ProcessSupervisorOptions job(const std::string& name) {
  const std::string tmp = env("TEST_TMPDIR", "/tmp");
  ::setenv("TMPDIR", tmp.c_str(), 1);
  ::setenv("OMPI_MCA_btl", "self,vader", 1);
  ::setenv("OMPI_MCA_btl_vader_single_copy_mechanism", "none", 1);
  ::setenv("OMPI_MCA_btl_vader_backing_directory", tmp.c_str(), 1);
  ProcessSupervisorOptions o;
  o.worker = env("TEST_SRCDIR", ".") + "/" + env("TEST_WORKSPACE", "") +
             "/chapters/15_production_training/train_worker";
  o.ranks = 2;
  o.job.steps = 12;
  o.job.every = 3;
  o.job.dir = tmp + "/" + name;
  o.heartbeat_timeout_s = 3;
  return o;
}

TEST(ProcessSupervisor, KillHangCorruptAndFullDiskLoseNothing) {
  const SupervisedRun clean = supervise_processes(job("clean"));
  EXPECT_EQ(clean.log.restarts, 0);
  ASSERT_FALSE(clean.final_weights.empty());
  ProcessSupervisorOptions o = job("faults");
  o.faults = {{FaultKind::kKill, 4, 1},           // resume at 3: nothing lost
              {FaultKind::kCorruptNewest, 8, 0},  // 6 corrupt: resume at 3, redo 4..7
              {FaultKind::kHang, 10, 1},          // resume at 9: nothing lost
              {FaultKind::kDiskFull, 11, 0}};     // the write of 12 fails: resume at 9, redo 10..12
  const SupervisedRun run = supervise_processes(o);
  ASSERT_EQ(run.failures.size(), 4u);
  const std::int64_t resumed[] = {3, 3, 9, 9}, lost[] = {0, 4, 0, 3};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(run.failures[i].plan.resume_from, resumed[i])
        << "failure " << i << ": " << run.failures[i].cause << " / " << run.failures[i].error;
    EXPECT_EQ(run.failures[i].plan.steps_lost, lost[i]) << "failure " << i;
  }
  EXPECT_EQ(run.failures[1].unverified, std::vector<std::int64_t>{6});
  EXPECT_NE(run.failures[2].cause.find("rank 1 hang at step 10"), std::string::npos)
      << run.failures[2].cause;
  EXPECT_NE(run.failures[2].detected_by.find(
                "hung: no heartbeat for 3 s; ranks 0, 1 stopped after step 9"),
            std::string::npos)
      << run.failures[2].detected_by;
  EXPECT_NE(run.failures[3].error.find("File too large"), std::string::npos)
      << "RLIMIT_FSIZE makes the kernel refuse the write (EFBIG): " << run.failures[3].error;
  EXPECT_NE(run.failures[0].detected_by.find("mpirun"), std::string::npos)
      << "a killed rank ends the job; mpirun's exit says so: " << run.failures[0].detected_by;
  EXPECT_EQ(run.predicted_redone, 7);
  EXPECT_EQ(run.log.steps_redone, 7) << "redone step executions, from the step log";
  EXPECT_EQ(run.log.steps.size(), 12u);
  ASSERT_EQ(run.final_weights.size(), clean.final_weights.size());
  EXPECT_EQ(std::memcmp(run.final_weights.data(), clean.final_weights.data(),
                        clean.final_weights.size() * sizeof(float)),
            0)
      << "after 4 failures the weights must equal an uninterrupted job's bit for bit";
}

TEST(ProcessSupervisor, RefusesAMissingWorker) {
  ProcessSupervisorOptions o = job("missing");
  o.worker = "/nonexistent/train_worker";
  book::testing::expect_error([&] { supervise_processes(o); },
                              "the worker /nonexistent/train_worker is not an executable file");
}

}  // namespace
}  // namespace book::prod
