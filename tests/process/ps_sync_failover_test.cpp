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

namespace troupe::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class PsSyncFailover : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("troupe_ps_sync_failover_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    write_ratings();
  }
  void TearDown() override { fs::remove_all(dir_); }

  // 4000 ratings of 30 users x 20 items by hidden rank-2 factors, in two TFRecord files (worker
  // w reads file w).
  void write_ratings() {
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> x(-1.f, 1.f);
    std::vector<float> users(60), items(40);
    for (auto& v : users) v = x(rng);
    for (auto& v : items) v = x(rng);
    data::TFRecordWriter even((dir_ / "ratings-0.tfrecord").string());
    data::TFRecordWriter odd((dir_ / "ratings-1.tfrecord").string());
    for (int n = 0; n < 4000; ++n) {
      int64_t u = int64_t(rng() % 30), i = int64_t(rng() % 20);
      data::Example example;
      example["ids"] = data::Feature::of_int64s({u, i});
      example["rating"] =
          data::Feature::of_floats({users[size_t(2 * u)] * items[size_t(2 * i)] +
                                    users[size_t(2 * u + 1)] * items[size_t(2 * i + 1)]});
      (n % 2 ? odd : even).write(data::encode_example(example));
    }
    even.close();
    odd.close();
  }

  // Two ps tasks, two workers, sync with replicas_to_aggregate 2 and replication 2.
  std::string write_experiment(int steps, int log_every) {
    const std::string path = (dir_ / "ps.yaml").string();
    std::ofstream(path)
        << "name: ps-sync-failover\nseed: 1\n"
        << "strategy: {kind: parameter_server, num_ps: 2, workers: 2, "
           "partitioner: {kind: fixed, num_shards: 2}, mode: sync, replicas_to_aggregate: 2, "
           "replication: 2}\n"
        << "model: {kind: embedding, num_users: 30, num_items: 20, embedding_dim: 4}\n"
        << "data: {kind: tfrecord, files: [" << (dir_ / "ratings-0.tfrecord").string() << ", "
        << (dir_ / "ratings-1.tfrecord").string()
        << "], features: {ids: {dtype: int64, shape: [2]}, rating: {dtype: float32}}, "
           "label: rating, global_batch: 64, shuffle: true}\n"
        << "optimizer: {kind: adagrad, learning_rate: 0.5}\n"
        << "train: {steps: " << steps << ", log_every: " << log_every
        << ", checkpoint_every: " << steps / 2 << ", checkpoint_dir: " << run_dir() << "}\n";
    return path;
  }

  std::string run_dir() const { return (dir_ / "run").string(); }

  static std::string finish(TroupeProcess& p, std::string text, int* code) {
    while (auto line = p.read_line(300s)) text += *line + "\n";
    *code = p.wait(60s).value_or(-1);
    return text + p.out() + "\n--- stderr ---\n" + p.err();
  }

  // Reads the launch's lines until `until` returns true; the pid of every task started so far
  // is in `pids` by task name ("/job:ps/task:0").
  static void read_until(TroupeProcess& launch, std::string& text, std::map<std::string, int>& pids,
                         const std::function<bool()>& until) {
    const std::regex started(R"(started (/job:\w+/task:\d+) \(pid (\d+)\))");
    while (!until()) {
      auto line = launch.read_line(std::chrono::seconds(240));
      ASSERT_TRUE(line) << text << launch.err();
      text += *line + "\n";
      std::smatch m;
      if (std::regex_search(*line, m, started)) pids[m[1]] = std::stoi(m[2]);
    }
  }

  // The coordinator's final loss ("finished at step N: loss X").
  static double final_loss(const std::string& out) {
    std::smatch m;
    if (!std::regex_search(out, m, std::regex(R"(finished at step \d+: loss ([0-9.e+-]+))")))
      return -1;
    return std::stod(m[1]);
  }

  // The step ids the shards applied, as the coordinator reports them at the end.
  static int64_t applied_at_shards(const std::string& out) {
    std::smatch m;
    if (!std::regex_search(out, m, std::regex(R"((\d+) update\(s\) applied at the shards)")))
      return -1;
    return std::stoll(m[1]);
  }

  fs::path dir_;
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
