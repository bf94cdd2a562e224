// A sync parameter_server run (SyncReplicas, spec cluster-and-ps.md §2.11) across processes that
// loses a ps task: `troupe launch -n 2 --ps 2` with replication 2, ps task 0 killed with kill -9
// mid-run. The accumulator and token queue live with the coordinator (worker task 0), not on a
// ps task; the worker applying a step's mean when the primary goes away has its update retried
// on the backup under the same step id (an update is acknowledged only once the backup has it),
// so it reports the step applied and the next step's tokens are released: the run completes
// with one update per global step.
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <regex>

#include "core/data/example_proto.hpp"
#include "core/data/tfrecord.hpp"
#include "experiment/checkpoint/checkpoint.hpp"
#include "tests/process/child_process.hpp"
#include "tests/process/ps_ratings_launch.hpp"

namespace troupe::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class PsSyncFailover : public PsRatingsLaunchTest {
 protected:
  PsSyncFailover() : PsRatingsLaunchTest("troupe_ps_sync_failover_") {}

  // Two ps tasks, two workers, sync with replicas_to_aggregate 2 and replication 2.
  std::string write_experiment(int steps, int log_every) {
    const std::string path = (dir_ / "ps.yaml").string();
    std::ofstream(path)
        << "name: ps-sync-failover\nseed: 1\n"
        << "strategy: {kind: parameter_server, num_ps: 2, workers: 2, "
           "partitioner: {kind: fixed, num_shards: 2}, mode: sync, replicas_to_aggregate: 2, "
           "replication: 2}\n"
        << "model: {kind: embedding, num_users: 30, num_items: 20, embedding_dim: 4}\n"
        << ratings_data() << "optimizer: {kind: adagrad, learning_rate: 0.5}\n"
        << "train: {steps: " << steps << ", log_every: " << log_every
        << ", checkpoint_every: " << steps / 2 << ", checkpoint_dir: " << run_dir() << "}\n";
    return path;
  }
};

TEST_F(PsSyncFailover, APsKilledMidRunWithReplicationTwoFailsOverAndEveryGlobalStepIsApplied) {
  const int steps = 600;
  TroupeProcess launch({"launch", "-n", "2", "--ps", "2", "--no-tls", write_experiment(steps, 10)});
  std::string text;
  std::map<std::string, int> pids;
  // Kill ps task 0 once the coordinator has logged a window: both workers are taking tokens,
  // offering, and one of them applying each step's mean on it.
  read_until(launch, text, pids,
             [&] { return pids.count("/job:ps/task:0") && contains(text, "[worker:0] step 20/"); });
  if (HasFatalFailure()) return;
  const int ps0 = pids.at("/job:ps/task:0");
  ASSERT_EQ(::kill(ps0, SIGKILL), 0);
  int code = -1;
  const std::string out = finish(launch, text, &code);
  ASSERT_EQ(code, 0) << out;
  EXPECT_TRUE(contains(out, "troupe launch: /job:ps/task:0 (pid " + std::to_string(ps0) +
                                ") was killed by signal 9 (SIGKILL); replication 2: the backup of "
                                "its variables on /job:ps/task:1 serves them from now on"))
      << out;
  EXPECT_TRUE(contains(out, "the run finished; 1 of 2 ps task(s) were lost")) << out;
  EXPECT_TRUE(contains(out, "[worker:0] finished at step 600")) << out;
  // Two workers, replicas_to_aggregate 2, no backup worker: no gradient goes stale, so each of
  // the 600 steps scheduled (two closures each) is one global step, applied once at the shards.
  EXPECT_TRUE(contains(out, "mode sync (global step 600), 600 update(s) applied at the shards"))
      << out;
  EXPECT_EQ(applied_at_shards(out), steps) << out;
  const double loss = final_loss(out);
  EXPECT_GE(loss, 0) << out;
  EXPECT_LT(loss, 0.05) << out;
  auto latest = checkpoint::latest_checkpoint(run_dir());
  ASSERT_TRUE(latest) << out;
  auto ckpt = checkpoint::read_checkpoint(*latest);
  EXPECT_EQ(ckpt.step, steps);
  EXPECT_EQ(ckpt.tensors.at("optimizer/iterations").scalar<int64_t>(), steps);
  EXPECT_EQ(ckpt.blobs.at("ps_sync"), "600,0");
}

}  // namespace
}  // namespace troupe::testing
