// A parameter_server experiment trained across processes with `troupe launch -n 2 --ps 2`
// (issue 12, items 6, 7, 10): the variables live on two `troupe server --job ps` processes,
// worker task 0 coordinates (TF's chief) and both worker processes run the scheduled
// train_step closures against their own connections to the shards, each on its own shard of
// the ratings. A worker killed with kill -9 mid-run has its closures rescheduled on the other,
// and the step ids applied at the shards equal the closures scheduled.
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <regex>
#include <set>

#include "core/data/example_proto.hpp"
#include "core/data/tfrecord.hpp"
#include "experiment/checkpoint/checkpoint.hpp"
#include "tests/process/child_process.hpp"
#include "tests/process/ps_ratings_launch.hpp"

namespace troupe::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class PsTraining : public PsRatingsLaunchTest {
 protected:
  PsTraining() : PsRatingsLaunchTest("troupe_ps_training_") {}

  std::string write_experiment(const std::string& strategy_extra, int steps, int log_every,
                               int num_ps = 2, int workers = 2) {
    const std::string path = (dir_ / "ps.yaml").string();
    std::ofstream(path)
        << "name: ps-launch\nseed: 1\n"
        << "strategy: {kind: parameter_server, num_ps: " << num_ps << ", workers: " << workers
        << ", partitioner: {kind: fixed, num_shards: 2}" << strategy_extra << "}\n"
        << "model: {kind: embedding, num_users: 30, num_items: 20, embedding_dim: 4}\n"
        << ratings_data() << "optimizer: {kind: adagrad, learning_rate: 0.5}\n"
        << "train: {steps: " << steps << ", log_every: " << log_every
        << ", checkpoint_every: " << steps / 2 << ", checkpoint_dir: " << run_dir() << "}\n";
    return path;
  }

  void expect_run_outputs(const std::string& out, int steps, int64_t iterations) {
    EXPECT_TRUE(fs::exists(run_dir() + "/metrics.csv")) << out;
    bool events = false;
    for (auto& entry : fs::directory_iterator(run_dir()))
      events |= entry.path().filename().string().rfind("events.out.tfevents", 0) == 0;
    EXPECT_TRUE(events) << out;
    auto latest = checkpoint::latest_checkpoint(run_dir());
    ASSERT_TRUE(latest) << out;
    auto ckpt = checkpoint::read_checkpoint(*latest);
    EXPECT_EQ(ckpt.step, steps);
    EXPECT_EQ(ckpt.tensors.at("embedding/users").shape(), (Shape{30, 4}));
    EXPECT_EQ(ckpt.tensors.at("embedding/items/accumulator").shape(), (Shape{20, 4}));
    EXPECT_EQ(ckpt.tensors.at("optimizer/iterations").scalar<int64_t>(), iterations);
  }
};

TEST_F(PsTraining, TwoPsTwoWorkersTrainMatrixFactorisationAsyncToALossThreshold) {
  TroupeProcess launch({"launch", "-n", "2", "--ps", "2", write_experiment("", 150, 50)});
  int code = -1;
  const std::string out = finish(launch, "", &code);
  ASSERT_EQ(code, 0) << out;
  EXPECT_TRUE(contains(out,
                       "[worker:1] troupe server /job:worker/task:1: serving "
                       "parameter_server steps on 127.0.0.1:"))
      << out;
  EXPECT_TRUE(contains(out, "coordinating 2 worker(s) over 2 ps task(s)")) << out;
  EXPECT_TRUE(contains(out, "[worker:0] step 150/150")) << out;
  // Ratings have variance about 0.2; the mean loss of the last 50 steps falls far below it.
  const double loss = final_loss(out);
  EXPECT_GE(loss, 0) << out;
  EXPECT_LT(loss, 0.05) << out;
  // Two closures per step, one update each, every one applied once at the shards.
  EXPECT_EQ(applied_at_shards(out), 300) << out;
  EXPECT_TRUE(contains(out, "the job is over (the coordinator stopped this worker)")) << out;
  EXPECT_TRUE(contains(out, "all 2 ps task(s) stopped")) << out;
  expect_run_outputs(out, 150, 300);
}

// Embeddings of 2048 floats: each step's gathers and sparse applies move ~100 KiB per ps task,
// above the bulk threshold (64 KiB), so both worker processes move them on the ps tasks' bulk
// connections and say how many bytes went each way.
TEST_F(PsTraining, WideEmbeddingGathersAndAppliesOfEveryWorkerTakeTheBulkConnections) {
  const std::string path = (dir_ / "wide.yaml").string();
  std::ofstream(path) << "name: ps-wide\nseed: 1\n"
                      << "strategy: {kind: parameter_server, num_ps: 2, workers: 2, "
                         "partitioner: {kind: fixed, num_shards: 2}}\n"
                      << "model: {kind: embedding, num_users: 30, num_items: 20, "
                         "embedding_dim: 2048}\n"
                      << ratings_data() << "optimizer: {kind: adagrad, learning_rate: 0.05}\n"
                      << "train: {steps: 20, log_every: 10, checkpoint_dir: " << run_dir() << "}\n";
  TroupeProcess launch({"launch", "-n", "2", "--ps", "2", "--no-tls", path});
  int code = -1;
  const std::string out = finish(launch, "", &code);
  ASSERT_EQ(code, 0) << out;
  const std::regex report(
      R"(\[worker:(\d)\] troupe server /job:worker/task:\d: (\d+) bytes sent and (\d+) received )"
      R"(on the bulk connections of 2 ps task\(s\))");
  std::set<std::string> reported;
  for (auto it = std::sregex_iterator(out.begin(), out.end(), report); it != std::sregex_iterator();
       ++it) {
    reported.insert((*it)[1]);
    EXPECT_GT(std::stoull((*it)[2]), 0u) << out;  // sparse applies' rows
    EXPECT_GT(std::stoull((*it)[3]), 0u) << out;  // gathered rows
  }
  EXPECT_EQ(reported, (std::set<std::string>{"0", "1"})) << out;
  EXPECT_EQ(applied_at_shards(out), 40) << out;
}

TEST_F(PsTraining, TwoPsTwoWorkersTrainMatrixFactorisationSyncToALossThreshold) {
  TroupeProcess launch({"launch", "-n", "2", "--ps", "2", "--no-tls",
                        write_experiment(", mode: sync, replicas_to_aggregate: 2", 200, 50)});
  int code = -1;
  const std::string out = finish(launch, "", &code);
  ASSERT_EQ(code, 0) << out;
  EXPECT_TRUE(contains(out, "mode sync")) << out;
  const double loss = final_loss(out);
  EXPECT_GE(loss, 0) << out;
  EXPECT_LT(loss, 0.1) << out;
  // Sync: one update per two accepted gradients. Each global step releases two tokens, so no
  // gradient goes stale: 400 closures make 200 updates, each applied once at the shards.
  EXPECT_EQ(applied_at_shards(out), 200) << out;
  expect_run_outputs(out, 200, 200);
}

TEST_F(PsTraining, AWorkerKilledMidRunIsReplacedAndUpdatesEqualStepsScheduled) {
  const int steps = 1000;
  TroupeProcess launch(
      {"launch", "-n", "2", "--ps", "2", "--no-tls", write_experiment("", steps, 10)});
  std::string text;
  std::map<std::string, int> pids;
  // Kill worker 1 once the coordinator has logged a window: closures are out on both workers.
  read_until(launch, text, pids, [&] {
    return pids.count("/job:worker/task:1") && contains(text, "[worker:0] step 20/");
  });
  if (HasFatalFailure()) return;
  const int worker1 = pids.at("/job:worker/task:1");
  ASSERT_EQ(::kill(worker1, SIGKILL), 0);
  int code = -1;
  const std::string out = finish(launch, text, &code);
  ASSERT_EQ(code, 0) << out;
  EXPECT_TRUE(contains(out, "/job:worker/task:1 (pid " + std::to_string(worker1) +
                                ") was killed by signal 9 (SIGKILL); the coordinator reschedules "
                                "its steps on the other workers"))
      << out;
  EXPECT_TRUE(contains(out, "the run finished; 1 of 2 worker(s) were lost")) << out;
  EXPECT_TRUE(contains(out, "2 worker(s) (1 alive)")) << out;
  // Every closure scheduled was applied once at the shards: none lost with the dead worker,
  // none applied twice when it ran again (the shards deduplicate by step id).
  EXPECT_EQ(applied_at_shards(out), 2 * steps) << out;
  expect_run_outputs(out, steps, 2 * steps);
}

TEST_F(PsTraining, AWorkerKilledMidRunInSyncModeIsReplacedAndTheRunCompletes) {
  const int steps = 600;
  TroupeProcess launch({"launch", "-n", "2", "--ps", "2", "--no-tls",
                        write_experiment(", mode: sync, replicas_to_aggregate: 2", steps, 10)});
  std::string text;
  std::map<std::string, int> pids;
  read_until(launch, text, pids, [&] {
    return pids.count("/job:worker/task:1") && contains(text, "[worker:0] step 20/");
  });
  if (HasFatalFailure()) return;
  const int worker1 = pids.at("/job:worker/task:1");
  // Worker 1 most likely dies holding a token of the current step: its closures run again on
  // worker 0 with a token of the step they find, so the step completes instead of waiting.
  ASSERT_EQ(::kill(worker1, SIGKILL), 0);
  int code = -1;
  const std::string out = finish(launch, text, &code);
  ASSERT_EQ(code, 0) << out;
  EXPECT_TRUE(contains(out, "the run finished; 1 of 2 worker(s) were lost")) << out;
  EXPECT_TRUE(contains(out, "[worker:0] finished at step 600")) << out;
  // Two accepted gradients per update: at most one update per two closures.
  const int64_t applied = applied_at_shards(out);
  EXPECT_GT(applied, 0) << out;
  EXPECT_LE(applied, steps) << out;
  expect_run_outputs(out, steps, applied);
}

TEST_F(PsTraining, APsKilledMidRunWithReplicationTwoFailsOverAndTheRunCompletes) {
  const int steps = 600;
  TroupeProcess launch({"launch", "-n", "2", "--ps", "2", "--no-tls",
                        write_experiment(", replication: 2", steps, 10)});
  std::string text;
  std::map<std::string, int> pids;
  // Kill ps task 0 once the coordinator has logged a window: both workers are pulling from and
  // pushing to it, and its variables have been copied to ps task 1 all along.
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
  // The coordinator's client failed over (its final bookkeeping reads through the backup).
  EXPECT_TRUE(contains(out, "[worker:0] ps client: ps shard 'ps:0' (/job:ps/task:0) went away"))
      << out;
  EXPECT_TRUE(contains(out, "its backup serves its variables from now on")) << out;
  EXPECT_TRUE(contains(out, "the run finished; 1 of 2 ps task(s) were lost")) << out;
  EXPECT_TRUE(contains(out, "[worker:0] finished at step 600")) << out;
  const double loss = final_loss(out);
  EXPECT_GE(loss, 0) << out;
  EXPECT_LT(loss, 0.05) << out;
  // Every closure scheduled was applied once at the shards: none lost with ps task 0 (an update
  // is acknowledged only once its backup has it, and one in flight is retried on the backup
  // with its step id), none applied twice.
  EXPECT_EQ(applied_at_shards(out), 2 * steps) << out;
  expect_run_outputs(out, steps, 2 * steps);
}

TEST_F(PsTraining, APsKilledMidRunWithReplicationOneFailsTheLaunchNamingTheTask) {
  TroupeProcess launch(
      {"launch", "-n", "2", "--ps", "2", "--no-tls", write_experiment("", 100000, 10)});
  std::string text;
  std::map<std::string, int> pids;
  read_until(launch, text, pids,
             [&] { return pids.count("/job:ps/task:0") && contains(text, "[worker:0] step 20/"); });
  if (HasFatalFailure()) return;
  const int ps0 = pids.at("/job:ps/task:0");
  ASSERT_EQ(::kill(ps0, SIGKILL), 0);
  int code = -1;
  const std::string out = finish(launch, text, &code);
  EXPECT_EQ(code, 1) << out;
  EXPECT_TRUE(contains(out, "troupe launch: failed: /job:ps/task:0 (pid " + std::to_string(ps0) +
                                ") was killed by signal 9 (SIGKILL)"))
      << out;
  EXPECT_FALSE(contains(out, "replication 2")) << out;
}

TEST_F(PsTraining, ASecondPsLossOfTheSameVariablesWithReplicationTwoFailsTheLaunchNamingIt) {
  TroupeProcess launch({"launch", "-n", "2", "--ps", "2", "--no-tls",
                        write_experiment(", replication: 2", 100000, 10)});
  std::string text;
  std::map<std::string, int> pids;
  read_until(launch, text, pids,
             [&] { return pids.count("/job:ps/task:1") && contains(text, "[worker:0] step 20/"); });
  if (HasFatalFailure()) return;
  ASSERT_EQ(::kill(pids.at("/job:ps/task:0"), SIGKILL), 0);
  // The run goes on on ps task 1 alone (the launcher named the failover on stderr, then a
  // window was logged), then it dies too.
  size_t failed_over = std::string::npos;
  read_until(launch, text, pids, [&] {
    if (failed_over == std::string::npos && contains(launch.err(), "serves them from now on"))
      failed_over = text.size();
    return failed_over != std::string::npos &&
           text.find("[worker:0] step ", failed_over) != std::string::npos;
  });
  if (HasFatalFailure()) return;
  const int ps1 = pids.at("/job:ps/task:1");
  ASSERT_EQ(::kill(ps1, SIGKILL), 0);
  int code = -1;
  const std::string out = finish(launch, text, &code);
  EXPECT_EQ(code, 1) << out;
  // The launcher names the second loss, unless the coordinator stopped first, naming the shard.
  EXPECT_TRUE(
      contains(out, "troupe launch: failed: /job:ps/task:1 (pid " + std::to_string(ps1) +
                        ") was killed by signal 9 (SIGKILL) after /job:ps/task:0: no "
                        "copy of the variables they shared is left") ||
      std::regex_search(
          out, std::regex(R"('ps:\d' \(/job:ps/task:\d\) serving variable '[^']+' went away)")))
      << out;
}

TEST_F(PsTraining, ALaunchWhoseClusterDoesNotMatchTheFileIsRefusedNamingBoth) {
  const std::string file = write_experiment("", 10, 5);
  TroupeProcess ps({"launch", "-n", "2", "--ps", "1", file});
  EXPECT_EQ(ps.wait(60s), 2) << ps.err();
  EXPECT_TRUE(contains(ps.err(), file + ": strategy.num_ps 2 and strategy.workers 2 do not match "
                                        "--ps 1 and -n 2"))
      << ps.err();
  EXPECT_FALSE(contains(ps.out(), "started")) << ps.out();
  TroupeProcess workers({"launch", "-n", "3", "--ps", "2", file});
  EXPECT_EQ(workers.wait(60s), 2) << workers.err();
  EXPECT_TRUE(contains(workers.err(), "do not match --ps 2 and -n 3")) << workers.err();
}

TEST_F(PsTraining, AWorkerTaskOfAnotherClusterShapeIsRefusedNamingBoth) {
  // A worker task started by hand in a cluster of one ps task for a file that wants two.
  const std::string cluster = (dir_ / "cluster.json").string();
  std::ofstream(cluster) << R"({"worker": ["127.0.0.1:1", "127.0.0.1:2"], "ps": ["127.0.0.1:3"]})";
  TroupeProcess server({"server", "--cluster", cluster, "--job", "worker", "--task", "1",
                        "--no-tls", write_experiment("", 10, 5)},
                       {"TROUPE_SECRET=not-a-real-secret-but-long-enough-0123456789"});
  EXPECT_EQ(server.wait(60s), 1) << server.err();
  EXPECT_TRUE(contains(server.err(),
                       "strategy.num_ps 2 and strategy.workers 2 do not match the cluster's 1 "
                       "ps task(s) and 2 worker task(s)"))
      << server.err();
  // Worker 0 coordinates: a chief job has no place in such a run, as a task or in the cluster.
  const std::string with_chief = (dir_ / "chief.json").string();
  std::ofstream(with_chief)
      << R"({"chief": ["127.0.0.1:4"], "worker": ["127.0.0.1:1", "127.0.0.1:2"], )"
      << R"("ps": ["127.0.0.1:3", "127.0.0.1:5"]})";
  TroupeProcess chief({"server", "--cluster", with_chief, "--job", "chief", "--task", "0",
                       "--no-tls", write_experiment("", 10, 5)},
                      {"TROUPE_SECRET=not-a-real-secret-but-long-enough-0123456789"});
  EXPECT_EQ(chief.wait(60s), 1) << chief.err();
  EXPECT_TRUE(contains(chief.err(), "a parameter_server run has worker and ps tasks, not chief"))
      << chief.err();
  TroupeProcess worker({"server", "--cluster", with_chief, "--job", "worker", "--task", "1",
                        "--no-tls", write_experiment("", 10, 5)},
                       {"TROUPE_SECRET=not-a-real-secret-but-long-enough-0123456789"});
  EXPECT_EQ(worker.wait(60s), 1) << worker.err();
  EXPECT_TRUE(contains(worker.err(),
                       "a parameter_server run across processes is coordinated by worker task 0; "
                       "a cluster with a chief job is not supported"))
      << worker.err();
}

}  // namespace
}  // namespace troupe::testing
