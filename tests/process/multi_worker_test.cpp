// MultiWorkerMirroredStrategy across real processes (`troupe launch` starting `troupe server`s on
// 127.0.0.1): location transparency against one process, chief-only checkpoints, exact resume,
// and a worker killed with SIGKILL (spec mirrored.md §2.5, cluster-and-ps.md §1).
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

#include "experiment/checkpoint/checkpoint.hpp"
#include "tests/process/basp_attack.hpp"
#include "tests/process/child_process.hpp"

namespace troupe::testing {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

class MultiWorker : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("troupe_multi_worker_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A small MLP experiment; `strategy` is the YAML of the strategy section.
  std::string write_experiment(const std::string& name, const std::string& strategy, int steps = 12,
                               int checkpoint_every = 0,
                               const std::string& model = "input_dim: 16, hidden: [12]") {
    std::string path = (dir_ / (name + ".yaml")).string();
    std::ofstream(path) << "name: " << name << "\nseed: 7\nstrategy: " << strategy
                        << "\nmodel: {kind: mlp, " << model << ", classes: 4}\n"
                        << "data: {kind: synthetic_classification, examples: 1024, "
                           "global_batch: 64, shuffle: true, auto_shard: data}\n"
                        << "optimizer: {kind: momentum, learning_rate: 0.05, momentum: 0.9}\n"
                        << "train: {steps: " << steps
                        << ", log_every: 4, checkpoint_every: " << checkpoint_every
                        << ", checkpoint_dir: " << (dir_ / name).string() << "}\n";
    return path;
  }

  static int run_to_end(TroupeProcess& p, std::string* out = nullptr) {
    std::string text;
    while (auto line = p.read_line(std::chrono::seconds(120))) text += *line + "\n";
    auto code = p.wait(std::chrono::seconds(60));
    if (out) *out = text + p.out() + "\n--- stderr ---\n" + p.err();
    return code.value_or(-1);
  }

  std::map<std::string, Tensor> final_weights(const std::string& run) {
    auto latest = checkpoint::latest_checkpoint((dir_ / run).string());
    EXPECT_TRUE(latest) << "no checkpoint in " << (dir_ / run);
    if (!latest) return {};
    return checkpoint::read_checkpoint(*latest).tensors;
  }

  static void expect_close(const std::map<std::string, Tensor>& a,
                           const std::map<std::string, Tensor>& b, double tolerance) {
    ASSERT_FALSE(a.empty());
    for (auto& [name, t] : a) {
      if (name.rfind("metrics/", 0) == 0) continue;
      auto it = b.find(name);
      ASSERT_NE(it, b.end()) << name;
      ASSERT_EQ(t.num_elements(), it->second.num_elements()) << name;
      if (t.dtype() != DType::float32) continue;
      double worst = 0;
      for (int64_t i = 0; i < t.num_elements(); ++i)
        worst =
            std::max(worst, double(std::fabs(t.data<float>()[i] - it->second.data<float>()[i])));
      EXPECT_LE(worst, tolerance) << name;
    }
  }

  // A 100 KB gradient pack (256 x 96 + ... float32 parameters), above the 64 KiB of the small
  // packs, trained on 2 workers with `cross_memory` set to `value`; expects the log to name the
  // path its packs took and the weights to match one process's.
  void expect_large_packs_take(const std::string& value, const std::string& log) {
    const std::string wide = "input_dim: 256, hidden: [96]";
    auto mw = write_experiment(
        "mw",
        "{kind: multi_worker_mirrored, devices: [CPU:0, CPU:1], communication: {implementation: "
        "ring, cross_memory: " +
            value + "}}",
        12, 0, wide);
    auto one = write_experiment("one", "{kind: mirrored, devices: [CPU:0, CPU:1, CPU:2, CPU:3]}",
                                12, 0, wide);
    std::string out;
    TroupeProcess launch({"launch", "-n", "2", mw});
    ASSERT_EQ(run_to_end(launch, &out), 0) << out;
    EXPECT_TRUE(contains(out, log)) << out;
    TroupeProcess single({"run", one});
    ASSERT_EQ(run_to_end(single, &out), 0) << out;
    expect_close(final_weights("mw"), final_weights("one"), 1e-5);
  }

  fs::path dir_;
};

const char* kMultiWorker =
    "{kind: multi_worker_mirrored, devices: [CPU:0, CPU:1], communication: {implementation: ring}}";

TEST_F(MultiWorker, TwoWorkersTimesTwoReplicasTrainLikeOneProcessTimesFourAndOnlyTheChiefWrites) {
  auto mw = write_experiment("mw", kMultiWorker);
  auto one = write_experiment("one", "{kind: mirrored, devices: [CPU:0, CPU:1, CPU:2, CPU:3]}");
  std::string out;
  TroupeProcess launch({"launch", "-n", "2", mw});
  ASSERT_EQ(run_to_end(launch, &out), 0) << out;
  EXPECT_TRUE(contains(out, "[worker:0] ")) << out;
  EXPECT_TRUE(contains(out, "[worker:1] ")) << out;
  EXPECT_TRUE(contains(out, "all 2 worker(s) finished")) << out;
  // The model's 1 KiB of gradients is one pack: it met in the shared-memory rendezvous.
  EXPECT_TRUE(contains(out, "all-reduces of at most 65536 bytes meet in shared memory")) << out;
  TroupeProcess single({"run", one});
  ASSERT_EQ(run_to_end(single, &out), 0) << out;
  expect_close(final_weights("mw"), final_weights("one"), 1e-5);
  // The chief's checkpoint is the only one: worker 1's temporary directory is gone.
  EXPECT_FALSE(fs::exists(dir_ / "mw.workertemp_1"));
  EXPECT_TRUE(fs::exists(dir_ / "mw" / "metrics.csv"));
}

TEST_F(MultiWorker, WithCrossMemoryOnPacksAboveTheSmallOnesAreReadFromTheOtherWorkersMemory) {
  expect_large_packs_take("on",
                          "all-reduces above 65536 bytes are read from the other workers' memory");
}

TEST_F(MultiWorker, WithCrossMemoryOffPacksAboveTheSmallOnesAreSummedInSharedMemoryInPieces) {
  expect_large_packs_take("off",
                          "all-reduces above 65536 bytes are summed in shared memory in pieces of "
                          "1048576 bytes (cross memory off)");
}

TEST_F(MultiWorker, TheSameFileRunsInOneProcessWithTroupeRunToTheSameWeights) {
  auto mw = write_experiment("mw", kMultiWorker);
  std::string out;
  TroupeProcess launch({"launch", "-n", "2", "--no-tls", mw});
  ASSERT_EQ(run_to_end(launch, &out), 0) << out;
  auto launched = final_weights("mw");
  TroupeProcess local({"run", mw, "--overwrite"});
  ASSERT_EQ(run_to_end(local, &out), 0) << out;
  expect_close(launched, final_weights("mw"), 1e-5);
}

TEST_F(MultiWorker, ResumeAfterAStopContinuesExactly) {
  auto full = write_experiment("full", kMultiWorker, 12);
  auto part = write_experiment("part", kMultiWorker, 12);
  std::string out;
  TroupeProcess a({"launch", "-n", "2", "--no-tls", full});
  ASSERT_EQ(run_to_end(a, &out), 0) << out;
  TroupeProcess b1({"launch", "-n", "2", "--no-tls", part, "--steps", "6"});
  ASSERT_EQ(run_to_end(b1, &out), 0) << out;
  TroupeProcess b2({"launch", "-n", "2", "--no-tls", part, "--resume"});
  ASSERT_EQ(run_to_end(b2, &out), 0) << out;
  EXPECT_TRUE(contains(out, "resumed from")) << out;
  expect_close(final_weights("full"), final_weights("part"), 0.0);
}

TEST_F(MultiWorker, KilledWorkerIsNamedByTheOthersWithinTwoSecondsAndTheLauncherFails) {
  auto mw = write_experiment("mw", kMultiWorker, 1000000);
  TroupeProcess launch({"launch", "-n", "2", "--no-tls", mw});
  // The launcher names each worker's pid; wait until both train.
  std::regex started(R"(started /job:worker/task:1 \(pid (\d+)\))");
  int pid = -1;
  int steps_seen = 0;
  std::string text;
  const auto give_up = Clock::now() + std::chrono::seconds(120);
  while ((pid < 0 || steps_seen < 2) && Clock::now() < give_up) {
    auto line = launch.read_line(std::chrono::seconds(5));
    if (!line) continue;
    text += *line + "\n";
    std::smatch m;
    if (std::regex_search(*line, m, started)) pid = std::stoi(m[1]);
    if (contains(*line, "step ") && contains(*line, "loss=")) ++steps_seen;
  }
  ASSERT_GT(pid, 0) << text << launch.err();
  ASSERT_GE(steps_seen, 2) << text << launch.err();
  const auto killed = Clock::now();
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  // Worker 0's step fails naming the dead task; the launcher reports it too.
  const std::string named = "rank 1 (/job:worker/task:1) is down";
  std::optional<Clock::time_point> seen;
  while (!seen && Clock::now() < killed + std::chrono::seconds(30)) {
    launch.pump_for(std::chrono::milliseconds(20));
    if (contains(launch.err(), named)) seen = Clock::now();
  }
  ASSERT_TRUE(seen) << launch.err();
  EXPECT_LT(std::chrono::duration<double>(*seen - killed).count(), 2.0) << launch.err();
  auto code = launch.wait(std::chrono::seconds(30));
  std::string err = launch.err();
  EXPECT_EQ(code, 1) << err;
  EXPECT_TRUE(contains(
      err, "/job:worker/task:1 (pid " + std::to_string(pid) + ") was killed by signal 9 (SIGKILL)"))
      << err;
  EXPECT_TRUE(contains(err, "troupe launch: failed:")) << err;
}

TEST_F(MultiWorker, StoppedWorkerIsNamedByTheHeartbeatNotAtTheCollectiveTimeout) {
  // SIGSTOP keeps the worker's connections open: only the missing heartbeats tell.
  auto mw = write_experiment("mw", kMultiWorker, 1000000);
  TroupeProcess launch({"launch", "-n", "2", "--no-tls", mw});
  std::regex started(R"(started /job:worker/task:1 \(pid (\d+)\))");
  int pid = -1, steps_seen = 0;
  const auto give_up = Clock::now() + std::chrono::seconds(120);
  while ((pid < 0 || steps_seen < 2) && Clock::now() < give_up) {
    auto line = launch.read_line(std::chrono::seconds(5));
    if (!line) continue;
    std::smatch m;
    if (std::regex_search(*line, m, started)) pid = std::stoi(m[1]);
    if (contains(*line, "step ") && contains(*line, "loss=")) ++steps_seen;
  }
  ASSERT_GT(pid, 0) << launch.err();
  ASSERT_GE(steps_seen, 2) << launch.err();
  const auto stopped = Clock::now();
  ASSERT_EQ(::kill(pid, SIGSTOP), 0);
  const std::string named = "rank 1 (/job:worker/task:1) is down: no heartbeat for 1500 ms";
  std::optional<Clock::time_point> seen;
  while (!seen && Clock::now() < stopped + std::chrono::seconds(30)) {
    launch.pump_for(std::chrono::milliseconds(20));
    if (contains(launch.err(), named)) seen = Clock::now();
  }
  ::kill(pid, SIGCONT);
  ASSERT_TRUE(seen) << launch.err();
  std::printf("stopped worker named after %.2f s\n",
              std::chrono::duration<double>(*seen - stopped).count());
  EXPECT_EQ(launch.wait(std::chrono::seconds(30)), 1) << launch.err();
}

TEST_F(MultiWorker, TheMultiWorkerExampleTrainsToTheDemosAccuracyWithLaunch) {
  const std::string example = std::string(TROUPE_SOURCE_DIR) + "/examples/mlp_multi_worker.yaml";
  std::string out;
  TroupeProcess launch(
      {"launch", "-n", "2", example, "--dir", (dir_ / "example").string(), "--steps", "100"});
  ASSERT_EQ(run_to_end(launch, &out), 0) << out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(out, m,
                                std::regex(R"(\[worker:0\] finished at step 100: loss )"
                                           R"([0-9.]+, accuracy ([0-9.]+)%)")))
      << out;
  // The demo (mlp_mirrored, one process) reaches 100% on this synthetic set; over the last 50
  // steps of 100 the launched run must be there too.
  EXPECT_GE(std::stod(m[1]), 99.0) << out;
  // Its 814 KB gradient pack took whichever large path cross_memory: auto (the default) chose
  // with this host's rates, and every worker agreed on it: both name the same path.
  const std::regex large_path(R"(worker /job:worker/task:(\d): all-reduces above 65536 bytes )"
                              R"((are read from the other workers' memory|are summed in shared )"
                              R"(memory in pieces of 1048576 bytes))");
  std::set<std::string> paths, workers;
  for (std::sregex_iterator it(out.begin(), out.end(), large_path), end; it != end; ++it) {
    workers.insert((*it)[1]);
    paths.insert((*it)[2]);
  }
  EXPECT_EQ(workers.size(), 2u) << out;
  EXPECT_EQ(paths.size(), 1u) << out;
  EXPECT_TRUE(fs::exists(dir_ / "example" / "ckpt-100.manifest")) << out;
}

TEST_F(MultiWorker, LaunchRefusesAStrategyThatRunsInOneProcessBeforeStartingAnything) {
  auto file = write_experiment("one", "{kind: mirrored, devices: [CPU:0, CPU:1]}");
  TroupeProcess launch({"launch", "-n", "2", file});
  std::string out;
  EXPECT_EQ(run_to_end(launch, &out), 2) << out;
  EXPECT_TRUE(contains(out,
                       "strategy.kind is mirrored, which runs in one process; troupe launch "
                       "needs kind multi_worker_mirrored"))
      << out;
}

TEST_F(MultiWorker, ServerRefusesPlainConnectionsUnlessAskedTo) {
  auto file = write_experiment("mw", kMultiWorker);
  TroupeProcess server({"server", file});
  std::string out;
  EXPECT_EQ(run_to_end(server, &out), 2) << out;
  EXPECT_TRUE(contains(out, "troupe server needs --tls-dir DIR --node NAME")) << out;
}

TEST_F(MultiWorker, ForgedHeaderAtATrainingServerIsRefusedAndTheRunCompletes) {
  // A TLS cluster (launch's default) under attack: a 32-byte BASP header claiming a 4 GiB
  // payload sent to worker 0's port, held open while the workers train. 3,000 steps, so the
  // workers are still training (and listening) when the attacker connects, also under ASan,
  // where 300 steps once ended before it could.
  auto mw = write_experiment("mw", kMultiWorker, 3000);
  TroupeProcess launch({"launch", "-n", "2", mw});
  std::regex started(R"(started /job:worker/task:0 \(pid (\d+)\))");
  std::regex listening(R"(joining 2 worker\(s\) from 127\.0\.0\.1:(\d+) with mutual TLS)");
  int pid = -1, port = -1;
  std::string text;
  const auto give_up = Clock::now() + std::chrono::seconds(60);
  while ((pid < 0 || port < 0) && Clock::now() < give_up) {
    if (auto line = launch.read_line(std::chrono::milliseconds(100))) {
      std::smatch m;
      if (std::regex_search(*line, m, started)) pid = std::stoi(m[1]);
    }
    std::smatch m;
    const std::string err = launch.err();
    if (port < 0 && std::regex_search(err, m, listening)) port = std::stoi(m[1]);
  }
  ASSERT_GT(pid, 0) << launch.err();
  ASSERT_GT(port, 0) << launch.err();
  const long before = rss_kib(pid);
  {
    RawSocket attacker{uint16_t(port)};
    ASSERT_GE(attacker.fd, 0);
    attacker.send_all(basp_header(kClientHandshake, 0xFFFFFFFFu, 0));
    bool closed = false;
    attacker.read_until_closed(std::chrono::milliseconds(1500), closed);
    EXPECT_LT(rss_kib(pid) - before, 64 * 1024) << "KiB grown after the forged header";
  }
  std::string out;
  EXPECT_EQ(run_to_end(launch, &out), 0) << out;
  EXPECT_TRUE(contains(out, "[worker:0] finished at step 3000")) << out;
}

TEST_F(MultiWorker, WrongSecretIsRefusedAndLoggedAndTheClusterTrainsOn) {
  auto mw = write_experiment("mw", kMultiWorker, 300);
  TroupeProcess launch({"launch", "-n", "2", "--no-tls", mw});
  std::regex listening(R"(\[worker:0\] .*joining 2 worker\(s\) from 127\.0\.0\.1:(\d+))");
  int port = -1;
  const auto give_up = Clock::now() + std::chrono::seconds(60);
  while (port < 0 && Clock::now() < give_up) {
    launch.pump_for(std::chrono::milliseconds(100));
    std::smatch m;
    const std::string err = launch.err();
    if (std::regex_search(err, m, listening)) port = std::stoi(m[1]);
  }
  ASSERT_GT(port, 0) << launch.err();
  const std::string wrong = (dir_ / "wrong-secret").string();
  std::ofstream(wrong) << "not-the-secret-of-this-cluster";
  TroupeProcess stranger({"echo", "--port", std::to_string(port), "--secret-file", wrong});
  std::string said;
  EXPECT_NE(run_to_end(stranger, &said), 0) << said;
  EXPECT_TRUE(contains(said, "authentication failed")) << said;
  std::string out;
  EXPECT_EQ(run_to_end(launch, &out), 0) << out;
  EXPECT_TRUE(contains(out, "[worker:0] troupe: refused a client: wrong shared secret")) << out;
  EXPECT_TRUE(contains(out, "[worker:0] finished at step 300")) << out;
}

TEST_F(MultiWorker, ServerRefusesTasksWithoutACluster) {
  auto file = write_experiment("mw", kMultiWorker);
  TroupeProcess server({"server", file, "--no-tls"}, {"TF_CONFIG="});
  std::string out;
  EXPECT_EQ(run_to_end(server, &out), 2) << out;
  EXPECT_TRUE(contains(out, "no cluster: set TF_CONFIG or give --cluster FILE --job J --task I"))
      << out;
}

}  // namespace
}  // namespace troupe::testing
