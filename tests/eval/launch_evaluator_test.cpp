// The evaluator task as a process: `troupe launch -n 2 --evaluator` on a multi_worker_mirrored
// experiment, `troupe evaluate --once` on a finished run, and the refusals of both.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/process/child_process.hpp"

namespace troupe::testing {
namespace {

namespace fs = std::filesystem;

class EvaluatorProcess : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("troupe_eval_process_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write_experiment(bool with_eval = true) {
    const std::string path = (dir_ / "mw.yaml").string();
    std::ofstream(path) << "name: mw\nseed: 7\n"
                        << "strategy: {kind: multi_worker_mirrored, devices: [CPU:0], "
                           "communication: {implementation: ring}}\n"
                        << "model: {kind: mlp, input_dim: 16, hidden: [12], classes: 4}\n"
                        << "data: {kind: synthetic_classification, examples: 1024, "
                           "global_batch: 64}\n"
                        << "optimizer: {kind: sgd, learning_rate: 0.1}\n"
                        << "train: {steps: 12, log_every: 4, checkpoint_every: 4, "
                           "checkpoint_dir: "
                        << (dir_ / "run").string() << "}\n"
                        << (with_eval ? "eval: {data: {kind: synthetic_classification, examples: "
                                        "200}, batch: 64}\n"
                                      : "");
    return path;
  }

  static int run_to_end(TroupeProcess& p, std::string* out) {
    std::string text;
    while (auto line = p.read_line(std::chrono::seconds(120))) text += *line + "\n";
    auto code = p.wait(std::chrono::seconds(60));
    *out = text + p.out() + "\n--- stderr ---\n" + p.err();
    return code.value_or(-1);
  }

  std::string metrics() const {
    std::ifstream in(dir_ / "run" / "eval" / "metrics.csv");
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  fs::path dir_;
};

TEST_F(EvaluatorProcess, LaunchWithAnEvaluatorEvaluatesEveryCheckpointUpToTheLastStep) {
  std::string out;
  TroupeProcess launch({"launch", "-n", "2", "--evaluator", write_experiment()});
  ASSERT_EQ(run_to_end(launch, &out), 0) << out;
  EXPECT_TRUE(contains(out, "started /job:evaluator/task:0")) << out;
  EXPECT_TRUE(contains(out, "[evaluator] troupe server /job:evaluator/task:0: evaluated")) << out;
  EXPECT_TRUE(contains(out, "all 2 worker(s) and the evaluator finished")) << out;
  // The evaluator is no member of the workers' group: two workers joined it.
  EXPECT_TRUE(contains(out, "joining 2 worker(s)")) << out;
  const std::string csv = metrics();
  EXPECT_EQ(csv.rfind("step,loss,accuracy\n", 0), 0u) << csv;
  EXPECT_TRUE(contains(csv, "\n12,")) << csv;
  // Every checkpoint, once (the evaluator may start after the first one is written).
  EXPECT_EQ(csv.find("\n12,"), csv.rfind("\n12,")) << csv;
  EXPECT_TRUE(contains(csv, "\n4,")) << csv;
  EXPECT_TRUE(contains(csv, "\n8,")) << csv;

  // `troupe evaluate --once` on the finished run: nothing left to evaluate.
  TroupeProcess once({"evaluate", write_experiment(), "--once"});
  ASSERT_EQ(run_to_end(once, &out), 0) << out;
  EXPECT_TRUE(contains(out, "troupe evaluate: evaluated 0 checkpoint(s)")) << out;
  EXPECT_EQ(metrics(), csv);

  // A fresh launch refuses the earlier evaluation; --overwrite starts both over.
  TroupeProcess again({"launch", "-n", "2", "--evaluator", write_experiment()});
  ASSERT_EQ(run_to_end(again, &out), 2) << out;
  EXPECT_TRUE(contains(out, "holds an earlier")) << out;
  TroupeProcess overwrite(
      {"launch", "-n", "2", "--evaluator", "--overwrite", "--steps", "8", write_experiment()});
  ASSERT_EQ(run_to_end(overwrite, &out), 0) << out;
  const std::string fresh = metrics();
  EXPECT_TRUE(contains(fresh, "\n8,")) << fresh;
  EXPECT_FALSE(contains(fresh, "\n12,")) << fresh;
}

TEST_F(EvaluatorProcess, EvaluateOnceOnAFinishedRunWritesOneRowPerCheckpoint) {
  std::string out;
  TroupeProcess train({"launch", "-n", "2", write_experiment()});
  ASSERT_EQ(run_to_end(train, &out), 0) << out;
  TroupeProcess once({"evaluate", write_experiment(), "--once"});
  ASSERT_EQ(run_to_end(once, &out), 0) << out;
  EXPECT_TRUE(contains(out, "troupe evaluate: evaluated 3 checkpoint(s)")) << out;
  const std::string csv = metrics();
  EXPECT_TRUE(contains(csv, "\n4,") && contains(csv, "\n8,") && contains(csv, "\n12,")) << csv;
}

TEST_F(EvaluatorProcess, LaunchRefusesAnEvaluatorWithoutEvalData) {
  std::string out;
  TroupeProcess launch({"launch", "-n", "2", "--evaluator", write_experiment(false)});
  ASSERT_EQ(run_to_end(launch, &out), 2) << out;
  EXPECT_TRUE(contains(out, "mw.yaml has no eval section: --evaluator needs eval.data")) << out;
}

TEST_F(EvaluatorProcess, EvaluatorServerRefusesTrainingOptions) {
  std::string out;
  const std::string tf_config =
      R"(TF_CONFIG={"cluster": {"worker": ["127.0.0.1:1"]}, "task": {"type": "evaluator", "index": 0}})";
  TroupeProcess server({"server", write_experiment(), "--no-tls", "--resume"}, {tf_config});
  ASSERT_EQ(run_to_end(server, &out), 2) << out;
  EXPECT_TRUE(contains(out, "--resume applies to training tasks, not to the evaluator")) << out;
}

TEST_F(EvaluatorProcess, EvaluateRefusesAnExperimentWithoutEvalData) {
  std::string out;
  TroupeProcess once({"evaluate", write_experiment(false), "--once"});
  ASSERT_EQ(run_to_end(once, &out), 2) << out;
  EXPECT_TRUE(contains(out, "mw.yaml has no eval section: the evaluator needs eval.data")) << out;
}

TEST_F(EvaluatorProcess, SigtermStopsAWaitingEvaluator) {
  TroupeProcess evaluate({"evaluate", write_experiment()});
  auto first = evaluate.read_line(std::chrono::seconds(120));
  ASSERT_TRUE(first.has_value()) << evaluate.err();
  EXPECT_TRUE(contains(*first, "until step 12")) << *first;
  evaluate.signal(SIGTERM);  // no checkpoint will come: it waits until stopped
  std::string out;
  EXPECT_EQ(run_to_end(evaluate, &out), 143) << out;
  EXPECT_TRUE(contains(out, "troupe evaluate: stopped by signal 15 after 0 evaluation(s)")) << out;
}

}  // namespace
}  // namespace troupe::testing
