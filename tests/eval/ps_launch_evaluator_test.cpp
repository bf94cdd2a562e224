// The side-car evaluator of a parameter_server launch (issue 12 item 9): `troupe launch -n 2
// --ps 2 --evaluator` starts /job:evaluator/task:0 beside the ps and worker tasks; it evaluates
// every checkpoint the coordinator (worker 0) writes, on the experiment's eval data, into
// <run dir>/eval (metrics.csv and TensorBoard events), and ends after the last step's.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/process/child_process.hpp"

namespace troupe::testing {
namespace {

namespace fs = std::filesystem;

class PsLaunchEvaluator : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("troupe_ps_eval_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Matrix factorisation on in-memory ratings; the eval ratings are further draws of the same
  // hidden factors.
  std::string write_experiment() {
    const std::string path = (dir_ / "ps.yaml").string();
    std::ofstream(path) << "name: ps-eval\nseed: 3\n"
                        << "strategy: {kind: parameter_server, num_ps: 2, workers: 2, "
                           "partitioner: {kind: fixed, num_shards: 2}, mode: async}\n"
                        << "model: {kind: embedding, num_users: 50, num_items: 40, "
                           "embedding_dim: 4}\n"
                        << "data: {kind: synthetic_ratings, examples: 4000, users: 50, items: 40, "
                           "global_batch: 64}\n"
                        << "optimizer: {kind: adagrad, learning_rate: 0.5}\n"
                        << "train: {steps: 60, log_every: 20, checkpoint_every: 20, "
                           "checkpoint_dir: "
                        << (dir_ / "run").string() << "}\n"
                        << "eval: {data: {kind: synthetic_ratings, examples: 500, users: 50, "
                           "items: 40}, batch: 100}\n";
    return path;
  }

  static int run_to_end(TroupeProcess& p, std::string* out) {
    std::string text;
    while (auto line = p.read_line(std::chrono::seconds(300))) text += *line + "\n";
    auto code = p.wait(std::chrono::seconds(60));
    *out = text + p.out() + "\n--- stderr ---\n" + p.err();
    return code.value_or(-1);
  }

  std::string eval_metrics() const {
    std::ifstream in(dir_ / "run" / "eval" / "metrics.csv");
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  fs::path dir_;
};

TEST_F(PsLaunchEvaluator, EvaluatesEveryCheckpointOfTheCoordinatorUpToTheLastStep) {
  std::string out;
  TroupeProcess launch({"launch", "-n", "2", "--ps", "2", "--evaluator", write_experiment()});
  ASSERT_EQ(run_to_end(launch, &out), 0) << out;
  EXPECT_TRUE(contains(out, "started /job:evaluator/task:0")) << out;
  EXPECT_TRUE(contains(out, "coordinating 2 worker(s) over 2 ps task(s)")) << out;
  EXPECT_TRUE(contains(out, "[evaluator] troupe server /job:evaluator/task:0: evaluated")) << out;
  const std::string csv = eval_metrics();
  EXPECT_EQ(csv.rfind("step,loss,accuracy\n", 0), 0u) << csv;
  // The last step's checkpoint, once; the earlier ones unless the evaluator started after them
  // (it evaluates what it finds, so they are there too).
  EXPECT_TRUE(contains(csv, "\n60,")) << csv;
  EXPECT_EQ(csv.find("\n60,"), csv.rfind("\n60,")) << csv;
  EXPECT_TRUE(contains(csv, "\n20,")) << csv;
  EXPECT_TRUE(contains(csv, "\n40,")) << csv;
  // The eval loss of the last checkpoint is below the first's: the evaluator reads the
  // coordinator's variables, not its own initial ones.
  auto loss_at = [&](const std::string& step) {
    const size_t row = csv.find("\n" + step + ",");
    return std::stod(csv.substr(row + step.size() + 2));
  };
  EXPECT_LT(loss_at("60"), loss_at("20")) << csv;
  bool events = false;
  for (auto& entry : fs::directory_iterator(dir_ / "run" / "eval"))
    events |= entry.path().filename().string().rfind("events.out.tfevents", 0) == 0;
  EXPECT_TRUE(events);

  // `troupe evaluate --once` on the finished run agrees: nothing is left to evaluate.
  TroupeProcess once({"evaluate", write_experiment(), "--once"});
  ASSERT_EQ(run_to_end(once, &out), 0) << out;
  EXPECT_TRUE(contains(out, "troupe evaluate: evaluated 0 checkpoint(s)")) << out;
  EXPECT_EQ(eval_metrics(), csv);
}

}  // namespace
}  // namespace troupe::testing
