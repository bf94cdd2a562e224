// The side-car evaluator on a real run directory: one row per checkpoint with the loss a direct
// forward pass gives, nothing evaluated twice across restarts, unreadable checkpoints skipped and
// named, TensorBoard scalars, and its refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "coordinator/strategy.hpp"
#include "experiment/checkpoint/checkpoint.hpp"
#include "experiment/experiment_file.hpp"
#include "experiment/run/evaluator.hpp"
#include "experiment/run/event_writer.hpp"
#include "experiment/run/experiment_input.hpp"
#include "experiment/run/experiment_setup.hpp"
#include "tests/run/run_test_util.hpp"
#include "train/losses.hpp"
#include "train/registry.hpp"

namespace troupe::testing {
namespace {

namespace fs = std::filesystem;

proto::Experiment small_experiment(int64_t steps = 12) {
  return experiment::parse_experiment(
      "name: ev\nseed: 3\n"
      "strategy: {kind: mirrored, devices: [CPU:0, CPU:1]}\n"
      "model: {kind: mlp, input_dim: 8, hidden: [6], classes: 3}\n"
      "data: {kind: synthetic_classification, examples: 256, global_batch: 32}\n"
      "optimizer: {kind: sgd, learning_rate: 0.1}\n"
      "train: {steps: " +
      std::to_string(steps) +
      ", log_every: 4, checkpoint_every: 4, checkpoint_dir: runs/ev}\n"
      "eval: {data: {kind: synthetic_classification, examples: 70}, batch: 16}\n");
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Everything an evaluator printed (it writes to a temporary file).
struct Captured {
  std::FILE* file = std::tmpfile();
  ~Captured() { std::fclose(file); }
  std::string text() const {
    std::fflush(file);
    std::rewind(file);
    std::string out;
    char buffer[4096];
    size_t n;
    while ((n = std::fread(buffer, 1, sizeof buffer, file)) > 0) out.append(buffer, n);
    return out;
  }
};

class EvaluatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fresh_dir(std::string("eval-") +
                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    run(runtime_, experiment_, dir_);  // checkpoints at steps 4, 8 and 12
  }
  void TearDown() override { fs::remove_all(dir_); }

  EvaluatorOptions options(std::FILE* out) {
    EvaluatorOptions o;
    o.run_dir = dir_;
    o.out = out;
    return o;
  }

  // The loss and accuracy of the checkpoint's parameters over all eval examples in one batch,
  // through the model's forward pass and the loss function directly.
  std::pair<double, double> direct(int64_t step) {
    auto ckpt = checkpoint::read_checkpoint(
        checkpoint::resolve_checkpoint(dir_ + "/ckpt-" + std::to_string(step)));
    auto model = ModelRegistry::with_builtins().create_model("mlp", make_model_config(experiment_));
    std::vector<Tensor> params;
    for (auto& p : model->initial_parameters()) params.push_back(ckpt.tensors.at(p.name));
    proto::Experiment all_at_once = experiment_;
    all_at_once.mutable_eval()->set_batch(1000);
    auto batch = make_eval_dataset(all_at_once).make_iterator().next();
    EXPECT_TRUE(batch.has_value());
    auto kernels = default_kernels();
    Ops ops(*kernels);
    Tensor logits = model->forward(ops, params, batch->at(0));
    auto loss = sparse_softmax_cross_entropy(ops, logits, batch->at(1), 70);
    EXPECT_EQ(loss.stats.rows, 70);
    return {loss.stats.loss_sum / 70.0, double(loss.stats.correct) / 70.0};
  }

  proto::Experiment experiment_ = small_experiment();
  Runtime runtime_;
  std::string dir_;
};

TEST_F(EvaluatorTest, OneRowPerCheckpointWithTheLossOfADirectForwardPass) {
  Captured out;
  Evaluator evaluator(experiment_, options(out.file));
  auto results = evaluator.evaluate_new();
  ASSERT_EQ(results.size(), 3u) << out.text();
  std::istringstream csv(read_text(dir_ + "/eval/metrics.csv"));
  std::string line;
  ASSERT_TRUE(std::getline(csv, line));
  EXPECT_EQ(line, "step,loss,accuracy");
  const int64_t steps[] = {4, 8, 12};
  for (int i = 0; i < 3; ++i) {
    auto [loss, accuracy] = direct(steps[i]);
    EXPECT_EQ(results[size_t(i)].step, steps[i]);
    EXPECT_EQ(results[size_t(i)].examples, 70);
    EXPECT_NEAR(results[size_t(i)].loss, loss, 1e-5 * std::max(1.0, loss));
    EXPECT_DOUBLE_EQ(results[size_t(i)].accuracy, accuracy);
    ASSERT_TRUE(std::getline(csv, line));
    double row_step = 0, row_loss = 0, row_accuracy = 0;
    ASSERT_EQ(std::sscanf(line.c_str(), "%lf,%lf,%lf", &row_step, &row_loss, &row_accuracy), 3)
        << line;
    EXPECT_EQ(int64_t(row_step), steps[i]);
    EXPECT_NEAR(row_loss, loss, 1e-5 * std::max(1.0, loss));
    EXPECT_NEAR(row_accuracy, accuracy, 1e-9);
  }
  EXPECT_FALSE(std::getline(csv, line)) << line;
  // Training improves the model: the last checkpoint evaluates better than the first.
  EXPECT_LT(results[2].loss, results[0].loss);
  EXPECT_NE(out.text().find("eval step 12: loss"), std::string::npos) << out.text();
}

TEST_F(EvaluatorTest, TensorBoardScalarsUnderTheEvalDirectory) {
  Captured out;
  Evaluator evaluator(experiment_, options(out.file));
  auto results = evaluator.evaluate_new();
  ASSERT_EQ(results.size(), 3u);
  std::string events;
  for (auto& entry : fs::directory_iterator(dir_ + "/eval"))
    if (entry.path().filename().string().rfind("events.out.tfevents.", 0) == 0)
      events = entry.path().string();
  ASSERT_FALSE(events.empty());
  auto scalars = read_scalar_events(events);
  std::vector<std::string> seen;
  for (auto& s : scalars) {
    if (s.tag == "eval/loss" && s.step == 8) {
      EXPECT_NEAR(s.value, results[1].loss, 1e-6);
    }
    if (s.tag == "eval/accuracy" && s.step == 8) {
      EXPECT_NEAR(s.value, results[1].accuracy, 1e-6);
    }
    seen.push_back(s.tag + "@" + std::to_string(s.step));
  }
  for (const char* want : {"eval/loss@4", "eval/accuracy@4", "eval/loss@12", "eval/accuracy@12"})
    EXPECT_NE(std::find(seen.begin(), seen.end(), want), seen.end()) << want;
}

TEST_F(EvaluatorTest, ARestartedEvaluatorEvaluatesNoStepTwice) {
  Captured out;
  {
    Evaluator first(experiment_, options(out.file));
    ASSERT_EQ(first.evaluate_new().size(), 3u);
  }
  const std::string before = read_text(dir_ + "/eval/metrics.csv");
  Evaluator again(experiment_, options(out.file));
  EXPECT_TRUE(again.evaluated(4) && again.evaluated(8) && again.evaluated(12));
  EXPECT_TRUE(again.evaluate_new().empty());
  EXPECT_EQ(read_text(dir_ + "/eval/metrics.csv"), before);
  // Training continues: only the new checkpoint is evaluated, the header stays single.
  run(runtime_, experiment_, dir_, 16, /*resume=*/true);
  auto results = again.evaluate_new();
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].step, 16);
  const std::string after = read_text(dir_ + "/eval/metrics.csv");
  EXPECT_EQ(after.rfind(before, 0), 0u) << after;
  EXPECT_EQ(after.find("step,loss"), after.rfind("step,loss")) << after;
}

TEST_F(EvaluatorTest, ARowCutShortByACrashIsEvaluatedAgain) {
  Captured out;
  {
    Evaluator first(experiment_, options(out.file));
    ASSERT_EQ(first.evaluate_new().size(), 3u);
  }
  // As if the machine died while appending step 12's row.
  std::string text = read_text(dir_ + "/eval/metrics.csv");
  const size_t last = text.rfind("12,");
  ASSERT_NE(last, std::string::npos);
  std::ofstream(dir_ + "/eval/metrics.csv", std::ios::trunc) << text.substr(0, last + 5);
  Evaluator again(experiment_, options(out.file));
  EXPECT_FALSE(again.evaluated(12));
  auto results = again.evaluate_new();
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].step, 12);
  std::string repaired = read_text(dir_ + "/eval/metrics.csv");
  EXPECT_EQ(std::count(repaired.begin(), repaired.end(), '\n'), 4) << repaired;
}

TEST_F(EvaluatorTest, ACorruptCheckpointIsSkippedWithAWarningNamingIt) {
  {
    std::fstream data(dir_ + "/ckpt-8.data", std::ios::in | std::ios::out | std::ios::binary);
    data.seekp(20);
    data.put('\x5a');
    data.seekp(21);
    data.put('\xa5');
  }
  Captured out;
  Evaluator evaluator(experiment_, options(out.file));
  auto results = evaluator.evaluate_new();
  ASSERT_EQ(results.size(), 2u) << out.text();
  EXPECT_EQ(results[0].step, 4);
  EXPECT_EQ(results[1].step, 12);
  EXPECT_TRUE(evaluator.skipped(8));
  EXPECT_NE(out.text().find("warning: evaluator: skipping checkpoint " + dir_ + "/ckpt-8:"),
            std::string::npos)
      << out.text();
  // Warned once: the next pass neither retries it nor repeats the warning.
  EXPECT_TRUE(evaluator.evaluate_new().empty());
  const std::string text = out.text();
  EXPECT_EQ(text.find("skipping"), text.rfind("skipping")) << text;
  EXPECT_EQ(read_text(dir_ + "/eval/metrics.csv").find("\n8,"), std::string::npos);
}

TEST_F(EvaluatorTest, AHalfWrittenCheckpointIsSkippedWithAWarningNamingIt) {
  fs::remove(dir_ + "/ckpt-4.data");  // the manifest is there, its data file is not
  Captured out;
  Evaluator evaluator(experiment_, options(out.file));
  auto results = evaluator.evaluate_new();
  ASSERT_EQ(results.size(), 2u) << out.text();
  EXPECT_EQ(results[0].step, 8);
  EXPECT_NE(out.text().find("skipping checkpoint " + dir_ + "/ckpt-4:"), std::string::npos)
      << out.text();
  EXPECT_NE(out.text().find("ckpt-4.data"), std::string::npos) << out.text();
}

TEST_F(EvaluatorTest, RunEvaluatorReturnsOnceTheLastStepIsEvaluated) {
  Captured out;
  Evaluator evaluator(experiment_, options(out.file));
  EXPECT_EQ(run_evaluator(evaluator, 12, nullptr), 3);
  EXPECT_TRUE(evaluator.evaluated(12));
}

TEST_F(EvaluatorTest, RunEvaluatorReturnsWhenStoppedBeforeTheLastStep) {
  Captured out;
  Evaluator evaluator(experiment_, options(out.file));
  std::atomic<bool> stop{true};
  EXPECT_EQ(run_evaluator(evaluator, 100, &stop), 3);
  EXPECT_FALSE(evaluator.evaluated(100));
}

TEST_F(EvaluatorTest, ACheckpointOfAnotherModelIsAnErrorNamingTheTensor) {
  proto::Experiment wider = experiment_;
  wider.mutable_model()->set_hidden(0, 7);
  Captured out;
  Evaluator evaluator(wider, options(out.file));
  try {
    evaluator.evaluate_new();
    FAIL() << "evaluated a checkpoint of another model";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::invalid_argument);
    EXPECT_NE(std::string(e.what()).find(dir_ + "/ckpt-4': tensor '"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("but the model needs"), std::string::npos) << e.what();
  }
}

TEST_F(EvaluatorTest, AMetricsFileNotWrittenByTheEvaluatorIsRefused) {
  fs::create_directories(dir_ + "/eval");
  std::ofstream(dir_ + "/eval/metrics.csv") << "epoch,val_loss\n1,0.5\n";
  Captured out;
  try {
    Evaluator evaluator(experiment_, options(out.file));
    FAIL() << "accepted a foreign metrics.csv";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(dir_ + "/eval/metrics.csv does not start with the header "
                                                "step,loss,accuracy"),
              std::string::npos)
        << e.what();
  }
}

TEST(Evaluator, AnExperimentWithoutEvalDataIsRefused) {
  auto e = small_experiment();
  e.clear_eval();
  EvaluatorOptions o;
  o.run_dir = fresh_dir("eval-none");
  try {
    Evaluator evaluator(e, o);
    FAIL() << "no eval section accepted";
  } catch (const Error& err) {
    EXPECT_EQ(err.code(), Code::failed_precondition);
    EXPECT_NE(std::string(err.what()).find("experiment 'ev' has no eval section"),
              std::string::npos)
        << err.what();
  }
}

TEST(Evaluator, ARegressionModelHasAnEmptyAccuracyColumnAndNoAccuracyScalar) {
  auto e = experiment::parse_experiment(
      "name: lin\nseed: 1\nstrategy: {kind: default}\nmodel: {kind: linear, input_dim: 4}\n"
      "data: {kind: synthetic_regression, examples: 64, global_batch: 16}\n"
      "optimizer: {kind: sgd, learning_rate: 0.05}\n"
      "train: {steps: 4, log_every: 2, checkpoint_every: 2, checkpoint_dir: runs/lin}\n"
      "eval: {data: {kind: synthetic_regression, examples: 20}}\n");
  Runtime runtime;
  const std::string dir = fresh_dir("eval-linear");
  run(runtime, e, dir);
  Captured out;
  EvaluatorOptions o;
  o.run_dir = dir;
  o.out = out.file;
  Evaluator evaluator(e, o);
  auto results = evaluator.evaluate_new();
  ASSERT_EQ(results.size(), 2u) << out.text();
  EXPECT_EQ(results[1].accuracy, -1);
  EXPECT_GT(results[1].loss, 0);
  const std::string csv = read_text(dir + "/eval/metrics.csv");
  EXPECT_NE(csv.find("\n4,"), std::string::npos) << csv;
  EXPECT_EQ(csv.substr(csv.size() - 2), ",\n") << csv;  // the accuracy field is empty
  fs::remove_all(dir);
}

TEST(Evaluator, SyntheticEvalExamplesAreTheOnesAfterTheTrainingExamples) {
  auto e = small_experiment();
  auto eval = make_eval_dataset(e).make_iterator();
  proto::Experiment longer = e;
  longer.mutable_data()->set_examples(256 + 70);
  auto all = make_examples_dataset(longer).skip(256).batch(16).make_iterator();
  int64_t batches = 0;
  while (auto b = eval.next()) {
    auto want = all.next();
    ASSERT_TRUE(want.has_value());
    ASSERT_EQ(b->at(0).num_elements(), want->at(0).num_elements());
    for (int64_t i = 0; i < b->at(0).num_elements(); ++i)
      ASSERT_EQ(b->at(0).data<float>()[i], want->at(0).data<float>()[i]);
    ++batches;
  }
  EXPECT_EQ(batches, 5);  // 70 examples in batches of 16: the last one short
}

}  // namespace
}  // namespace troupe::testing
