// `troupe launch -n W --ps P FILE --resume` of an async parameter_server run (issue 12): with
// `replication: 1` a ps task killed with kill -9 stops the launch naming the task; the same
// command with --resume restores variables, slots and the update count onto fresh shards from
// the newest checkpoint, tells each worker process where its dataset resumes (the checkpoint's
// `ps_worker_batches`), reports the steps lost after the checkpoint and trains to the end. With
// one worker (closures run in schedule order) the resumed run ends bitwise equal to an
// uninterrupted one, Adam included. A checkpoint of another worker count is refused before anything
// trains.
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <regex>
#include <sstream>

#include "core/data/example_proto.hpp"
#include "core/data/tfrecord.hpp"
#include "experiment/checkpoint/checkpoint.hpp"
#include "tests/process/child_process.hpp"
#include "tests/process/ps_ratings_launch.hpp"

namespace troupe::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class PsLaunchResume : public PsRatingsLaunchTest {
 protected:
  PsLaunchResume() : PsRatingsLaunchTest("troupe_ps_launch_resume_") {}

  // An async run of 100000 steps (a launch is stopped by a kill, or given --steps), logging every
  // 10 steps and checkpointing every 20, into run_dir().
  std::string write_experiment(int workers, const std::string& name = "ps.yaml",
                               const std::string& optimizer = "adagrad, learning_rate: 0.5",
                               const std::string& mode = "async") {
    const std::string path = (dir_ / name).string();
    std::ofstream(path)
        << "name: ps-launch-resume\nseed: 1\n"
        << "strategy: {kind: parameter_server, num_ps: 2, workers: " << workers
        << ", partitioner: {kind: fixed, num_shards: 2}, mode: " << mode << "}\n"
        << "model: {kind: embedding, num_users: 30, num_items: 20, embedding_dim: 4}\n"
        << ratings_data() << "optimizer: {kind: " << optimizer << "}\n"
        << "train: {steps: 100000, log_every: 10, checkpoint_every: 20, checkpoint_dir: "
        << run_dir() << "}\n";
    return path;
  }

  // Launches FILE with W workers until step 30 is logged (the checkpoint of step 20 is
  // written), kills ps task 0 with kill -9 and checks that the launch fails naming it.
  void launch_and_kill_a_ps(const std::string& file, int workers) {
    TroupeProcess launch({"launch", "-n", std::to_string(workers), "--ps", "2", "--no-tls", file});
    std::string text;
    std::map<std::string, int> pids;
    read_until(launch, text, pids, [&] {
      return pids.count("/job:ps/task:0") && contains(text, "[worker:0] step 30/");
    });
    if (HasFatalFailure()) return;
    const int ps0 = pids.at("/job:ps/task:0");
    ASSERT_EQ(::kill(ps0, SIGKILL), 0);
    int code = -1;
    const std::string out = finish(launch, text, &code);
    ASSERT_EQ(code, 1) << out;
    ASSERT_TRUE(contains(out, "troupe launch: failed: /job:ps/task:0 (pid " + std::to_string(ps0) +
                                  ") was killed by signal 9 (SIGKILL)"))
        << out;
  }

  // `troupe launch ... FILE --resume --steps STEPS`: its output; the exit code in `code`.
  std::string resume(const std::string& file, int workers, int64_t steps, int* code) {
    TroupeProcess launch({"launch", "-n", std::to_string(workers), "--ps", "2", "--no-tls", file,
                          "--resume", "--steps", std::to_string(steps)});
    return finish(launch, "", code);
  }

  // "resumed at step S of the checkpoint DIR/ckpt-S; L step(s) after it were lost": {S, L}.
  static std::pair<int64_t, int64_t> resumed_line(const std::string& out,
                                                  const std::string& run_dir) {
    std::smatch m;
    const std::regex line(R"(\[worker:0\] resumed at step (\d+) of the checkpoint (\S+); (\d+) )"
                          R"(step\(s\) after it were lost)");
    if (!std::regex_search(out, m, line)) return {-1, -1};
    EXPECT_EQ(m[2].str(), run_dir + "/ckpt-" + m[1].str());
    return {std::stoll(m[1]), std::stoll(m[3])};
  }

  static int64_t applied_at_shards(const std::string& out) {
    std::smatch m;
    if (!std::regex_search(out, m, std::regex(R"((\d+) update\(s\) applied at the shards)")))
      return -1;
    return std::stoll(m[1]);
  }

  static double final_loss(const std::string& out) {
    std::smatch m;
    if (!std::regex_search(out, m, std::regex(R"(finished at step \d+: loss ([0-9.e+-]+))")))
      return -1;
    return std::stod(m[1]);
  }

  // The sum of a checkpoint's per-worker batch counts ("12,11" -> 23) and their number.
  static std::pair<int64_t, size_t> worker_batches(const checkpoint::Checkpoint& ckpt) {
    std::stringstream in(ckpt.blobs.at("ps_worker_batches"));
    std::string item;
    int64_t sum = 0;
    size_t n = 0;
    while (std::getline(in, item, ',')) {
      sum += std::stoll(item);
      ++n;
    }
    return {sum, n};
  }

  // The last step metrics.csv records.
  int64_t last_logged_step() const {
    std::ifstream in(run_dir() + "/metrics.csv");
    std::string line;
    int64_t last = 0;
    while (std::getline(in, line))
      if (!line.empty() && std::isdigit(static_cast<unsigned char>(line[0])))
        last = std::max<int64_t>(last, std::stoll(line));
    return last;
  }
};

TEST_F(PsLaunchResume, APsKilledWithReplicationOneFailsNamingItThenResumeCompletesTheRun) {
  const std::string file = write_experiment(2);
  launch_and_kill_a_ps(file, 2);
  if (HasFatalFailure()) return;
  // The newest checkpoint (step 20 or later): two closures a step, one update and one batch
  // each, every one applied at the shards before the checkpoint was taken after the join.
  auto latest = checkpoint::latest_checkpoint(run_dir());
  ASSERT_TRUE(latest);
  const auto before = checkpoint::read_checkpoint(*latest);
  ASSERT_GE(before.step, 20);
  const int64_t iterations = before.tensors.at("optimizer/iterations").scalar<int64_t>();
  EXPECT_EQ(iterations, 2 * before.step);
  EXPECT_EQ(worker_batches(before), (std::pair<int64_t, size_t>{2 * before.step, 2}));
  const int64_t reached = last_logged_step();
  ASSERT_GE(reached, 30);

  // However far the killed run got, the resumed one trains 170 steps more.
  const int64_t total = before.step + 170;
  int code = -1;
  const std::string out = resume(file, 2, total, &code);
  ASSERT_EQ(code, 0) << out;
  const auto [step, lost] = resumed_line(out, run_dir());
  EXPECT_EQ(step, before.step) << out;
  EXPECT_EQ(lost, reached - before.step) << out;
  EXPECT_TRUE(contains(out, "[worker:0] finished at step " + std::to_string(total))) << out;
  const double loss = final_loss(out);
  EXPECT_GE(loss, 0) << out;
  EXPECT_LT(loss, 0.05) << out;
  // The shards' count continues from the checkpoint's: every closure after it applied once.
  EXPECT_EQ(applied_at_shards(out), iterations + 2 * (total - before.step)) << out;
  auto final_path = checkpoint::latest_checkpoint(run_dir());
  ASSERT_TRUE(final_path);
  const auto after = checkpoint::read_checkpoint(*final_path);
  EXPECT_EQ(after.step, total);
  EXPECT_EQ(after.tensors.at("optimizer/iterations").scalar<int64_t>(),
            iterations + 2 * (total - before.step));
  // The input positions went on from the checkpoint's: 2 batches a step over the whole run.
  EXPECT_EQ(worker_batches(after), (std::pair<int64_t, size_t>{2 * total, 2}));
}

// Adam: its slots and the update numbering of its bias correction (the checkpoint's count plus
// the closure's step id in the worker process) continue too.
TEST_F(PsLaunchResume, OneWorkerAdamKilledAndResumedEndsBitwiseEqualToAnUninterruptedLaunch) {
  const std::string file = write_experiment(1, "ps.yaml", "adam, learning_rate: 0.05");
  launch_and_kill_a_ps(file, 1);
  if (HasFatalFailure()) return;
  auto latest = checkpoint::latest_checkpoint(run_dir());
  ASSERT_TRUE(latest);
  const int64_t checkpointed = checkpoint::read_checkpoint(*latest).step;
  // However far the killed run got, both runs end 60 steps after its checkpoint.
  const int64_t total = checkpointed + 60;
  int code = -1;
  const std::string out = resume(file, 1, total, &code);
  ASSERT_EQ(code, 0) << out;
  EXPECT_EQ(resumed_line(out, run_dir()).first, checkpointed) << out;

  // The uninterrupted run, into its own directory.
  const std::string straight = (dir_ / "straight").string();
  TroupeProcess reference({"launch", "-n", "1", "--ps", "2", "--no-tls", file, "--steps",
                           std::to_string(total), "--dir", straight});
  const std::string reference_out = finish(reference, "", &code);
  ASSERT_EQ(code, 0) << reference_out;

  auto a = checkpoint::read_checkpoint(*checkpoint::latest_checkpoint(straight));
  auto b = checkpoint::read_checkpoint(*checkpoint::latest_checkpoint(run_dir()));
  ASSERT_EQ(a.step, total);
  ASSERT_EQ(b.step, total);
  ASSERT_EQ(a.tensors.size(), b.tensors.size());
  for (auto& [name, t] : a.tensors) {
    ASSERT_TRUE(b.tensors.count(name)) << name;
    EXPECT_TRUE(b.tensors.at(name).bitwise_equal(t)) << name;
  }
  EXPECT_EQ(a.blobs.at("ps_worker_batches"), std::to_string(total));
  EXPECT_EQ(b.blobs.at("ps_worker_batches"), std::to_string(total));
}

// Sync (replicas_to_aggregate = workers): the token queue lives with the coordinator, and a
// checkpoint is taken after the join at a global-step boundary (no gradient pending), so the
// resumed coordinator restarts the queue at the checkpoint's global step while each worker
// process's input continues where the checkpoint recorded it.
TEST_F(PsLaunchResume, ASyncRunKilledWithReplicationOneResumesAtItsGlobalStep) {
  const std::string file = write_experiment(2, "sync.yaml", "adagrad, learning_rate: 0.5", "sync");
  launch_and_kill_a_ps(file, 2);
  if (HasFatalFailure()) return;
  auto latest = checkpoint::latest_checkpoint(run_dir());
  ASSERT_TRUE(latest);
  const auto before = checkpoint::read_checkpoint(*latest);
  ASSERT_GE(before.step, 20);
  EXPECT_EQ(before.blobs.at("ps_sync"), std::to_string(before.step) + ",0");
  EXPECT_EQ(before.tensors.at("optimizer/iterations").scalar<int64_t>(), before.step);
  const int64_t reached = last_logged_step();

  const int64_t total = before.step + 170;
  int code = -1;
  const std::string out = resume(file, 2, total, &code);
  ASSERT_EQ(code, 0) << out;
  const auto [step, lost] = resumed_line(out, run_dir());
  EXPECT_EQ(step, before.step) << out;
  EXPECT_EQ(lost, reached - before.step) << out;
  EXPECT_TRUE(
      contains(out, "sync: the token queue restarts at global step " + std::to_string(before.step)))
      << out;
  EXPECT_TRUE(contains(out, "[worker:0] finished at step " + std::to_string(total))) << out;
  EXPECT_TRUE(contains(out, "mode sync (global step " + std::to_string(total) + ")")) << out;
  const double loss = final_loss(out);
  EXPECT_GE(loss, 0) << out;
  EXPECT_LT(loss, 0.05) << out;
  const auto after = checkpoint::read_checkpoint(*checkpoint::latest_checkpoint(run_dir()));
  EXPECT_EQ(after.step, total);
  EXPECT_EQ(after.blobs.at("ps_sync"), std::to_string(total) + ",0");
  EXPECT_EQ(after.tensors.at("optimizer/iterations").scalar<int64_t>(), total);
  EXPECT_EQ(worker_batches(after), (std::pair<int64_t, size_t>{2 * total, 2}));
}

TEST_F(PsLaunchResume, ResumeWithAnotherWorkerCountIsRefusedBeforeAnythingTrains) {
  // A run of 2 workers that ends at step 20 with its checkpoint.
  const std::string two = write_experiment(2);
  TroupeProcess first({"launch", "-n", "2", "--ps", "2", "--no-tls", two, "--steps", "20"});
  int code = -1;
  const std::string first_out = finish(first, "", &code);
  ASSERT_EQ(code, 0) << first_out;
  std::map<std::string, uintmax_t> files;
  for (auto& entry : fs::directory_iterator(run_dir()))
    files[entry.path().filename().string()] = entry.file_size();
  std::ifstream metrics(run_dir() + "/metrics.csv");
  const std::string metrics_before{std::istreambuf_iterator<char>(metrics), {}};

  // The same experiment with one worker (its data shard would be another) resumes that run.
  const std::string one = write_experiment(1, "one.yaml");
  const std::string out = resume(one, 1, 40, &code);
  EXPECT_NE(code, 0) << out;
  EXPECT_TRUE(contains(out, "checkpoint '" + run_dir() +
                                "/ckpt-20' was written by 2 worker(s), "
                                "this run has 1 (strategy.workers): each worker reads its own "
                                "shard of the data"))
      << out;
  EXPECT_FALSE(contains(out, "resumed at step")) << out;
  EXPECT_FALSE(contains(out, "[worker:0] step ")) << out;
  // Nothing was written: the same files, the same sizes, the same metrics.
  std::map<std::string, uintmax_t> after;
  for (auto& entry : fs::directory_iterator(run_dir()))
    after[entry.path().filename().string()] = entry.file_size();
  EXPECT_EQ(after, files);
  std::ifstream metrics_again(run_dir() + "/metrics.csv");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(metrics_again), {}), metrics_before);
}

}  // namespace
}  // namespace troupe::testing
