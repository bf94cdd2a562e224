// `troupe run` end to end in one process: logs, TensorBoard events, checkpoints, exact resume,
// replica-count equivalence, a different replica count on resume, refusing a corrupt checkpoint.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "coordinator/runtime.hpp"
#include "experiment/checkpoint/checkpoint.hpp"
#include "experiment/experiment_file.hpp"
#include "experiment/run/event_writer.hpp"
#include "experiment/run/experiment_runner.hpp"
#include "tests/run/run_test_util.hpp"

using namespace troupe;
using troupe::testing::fresh_dir;
using troupe::testing::run;

namespace {

proto::Experiment small_experiment(int replicas, const std::string& optimizer = "sgd",
                                   int64_t checkpoint_every = 0) {
  std::string devices;
  for (int i = 0; i < replicas; ++i) devices += (i ? ", CPU:" : "CPU:") + std::to_string(i);
  std::ostringstream yaml;
  yaml << "name: small\nseed: 7\n"
       << "strategy: {kind: mirrored, devices: [" << devices
       << "], cross_device_ops: {kind: ring}}\n"
       << "model: {kind: mlp, input_dim: 16, hidden: [12], classes: 3}\n"
       << "data: {kind: synthetic_classification, examples: 500, global_batch: 32, shuffle: true}\n"
       << "optimizer: {kind: " << optimizer << ", learning_rate: 0.05}\n"
       << "train: {steps: 40, log_every: 10"
       << (checkpoint_every ? ", checkpoint_every: " + std::to_string(checkpoint_every) +
                                  ", checkpoint_dir: runs/small"
                            : "")
       << "}\n";
  return experiment::parse_experiment(yaml.str(), "small.yaml");
}

std::map<std::string, Tensor> model_tensors(const std::string& checkpoint_path) {
  auto all = checkpoint::read_checkpoint(checkpoint_path).tensors;
  std::map<std::string, Tensor> model;
  for (auto& [name, t] : all)
    if (name.rfind("dense", 0) == 0 && name.find("/momentum") == std::string::npos)
      model.emplace(name, t);
  return model;
}

}  // namespace

TEST(Runner, WritesLogsEventsAndCheckpoints) {
  Runtime runtime;
  auto dir = fresh_dir("logs");
  auto s = run(runtime, small_experiment(2, "sgd", 15), dir, 0, false, dir + "/trace.json");
  EXPECT_EQ(s.last_step, 40);
  EXPECT_FALSE(s.interrupted);
  EXPECT_GE(s.final_accuracy, 0.0);
  EXPECT_TRUE(std::filesystem::exists(dir + "/ckpt-15.manifest"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/ckpt-30.manifest"));
  EXPECT_EQ(s.checkpoint, dir + "/ckpt-40");
  auto events = read_scalar_events(s.events_file);
  int losses = 0;
  for (auto& ev : events)
    if (ev.tag == "loss") {
      ++losses;
      EXPECT_EQ(ev.step % 10, 0);
      EXPECT_GT(ev.value, 0.0f);
    }
  EXPECT_EQ(losses, 4);
  // The steady-state figure counts from the end of the first window (step 10).
  EXPECT_EQ(s.steady_from_step, 10);
  EXPECT_GT(s.steady_examples_per_s, 0.0);
  EXPECT_GT(s.examples_per_s, 0.0);
  std::ifstream csv(s.metrics_csv);
  std::string header, row;
  std::getline(csv, header);
  EXPECT_EQ(header, "step,loss,accuracy,steps_per_s,examples_per_s");
  int rows = 0;
  while (std::getline(csv, row)) ++rows;
  EXPECT_EQ(rows, 4);
  std::ifstream trace(dir + "/trace.json");
  std::stringstream text;
  text << trace.rdbuf();
  EXPECT_NE(text.str().find(
                "\"name\":\"replica_step\",\"cat\":\"replica\",\"ph\":\"X\",\"pid\":1,\"tid\":2"),
            std::string::npos);
  std::filesystem::remove_all(dir);
}

// A run that logs one window only (log_every 0: the last step) has no steady state to report.
TEST(Runner, OneLoggedWindowGivesNoSteadyStateFigure) {
  Runtime runtime;
  auto dir = fresh_dir("one-window");
  auto e = small_experiment(1);
  e.mutable_train()->set_log_every(0);
  auto s = run(runtime, e, dir, 12);
  EXPECT_EQ(s.last_step, 12);
  EXPECT_EQ(s.steady_examples_per_s, 0.0);
  EXPECT_GT(s.examples_per_s, 0.0);
  std::filesystem::remove_all(dir);
}

TEST(Runner, ResumeFromAMidRunCheckpointEndsBitwiseEqual) {
  Runtime runtime;
  auto straight = fresh_dir("straight"), resumed = fresh_dir("resumed");
  auto e = small_experiment(2, "adam");
  auto a = run(runtime, e, straight);
  run(runtime, e, resumed, /*steps=*/17);
  auto b = run(runtime, e, resumed, 0, /*resume=*/true);
  EXPECT_EQ(b.first_step, 17);
  EXPECT_EQ(b.last_step, 40);
  auto wa = model_tensors(a.checkpoint), wb = model_tensors(b.checkpoint);
  ASSERT_FALSE(wa.empty());
  ASSERT_EQ(wa.size(), wb.size());
  for (auto& [name, t] : wa) EXPECT_TRUE(t.bitwise_equal(wb.at(name))) << name;
  std::filesystem::remove_all(straight);
  std::filesystem::remove_all(resumed);
}

TEST(Runner, Equivalence_1_2_4_ReplicasAgreeWithin1e4) {
  Runtime runtime;
  std::vector<std::map<std::string, Tensor>> weights;
  for (int n : {1, 2, 4}) {
    auto dir = fresh_dir("equiv" + std::to_string(n));
    weights.push_back(model_tensors(run(runtime, small_experiment(n), dir).checkpoint));
    std::filesystem::remove_all(dir);
  }
  for (size_t k = 1; k < weights.size(); ++k)
    for (auto& [name, t] : weights[0]) {
      auto a = t.to_vector<float>(), b = weights[k].at(name).to_vector<float>();
      ASSERT_EQ(a.size(), b.size());
      for (size_t i = 0; i < a.size(); ++i)
        ASSERT_NEAR(b[i], a[i], 1e-4 * std::max(1.0f, std::abs(a[i]))) << name << "[" << i << "]";
    }
}

TEST(Runner, ResumeWithADifferentReplicaCount) {
  Runtime runtime;
  auto dir = fresh_dir("reshard");
  run(runtime, small_experiment(2), dir, 20);
  auto s = run(runtime, small_experiment(4), dir, 0, true);
  EXPECT_EQ(s.first_step, 20);
  EXPECT_EQ(s.last_step, 40);
  std::filesystem::remove_all(dir);
}

TEST(Runner, CorruptCheckpointIsRefusedNamingFileAndTensor) {
  Runtime runtime;
  auto dir = fresh_dir("corrupt");
  run(runtime, small_experiment(2), dir, 10);
  {
    std::fstream f(dir + "/ckpt-10.data", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(8);
    f.put('\x55');
  }
  try {
    run(runtime, small_experiment(2), dir, 0, true);
    FAIL() << "corrupt checkpoint accepted";
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("ckpt-10"), std::string::npos) << what;
    EXPECT_NE(what.find("dense"), std::string::npos) << what;  // the tensor it hit
  }
  std::filesystem::remove_all(dir);
}

TEST(Runner, ResumeWithoutACheckpointNamesTheDirectory) {
  Runtime runtime;
  auto dir = fresh_dir("empty");
  try {
    run(runtime, small_experiment(2), dir, 0, true);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no checkpoint in '" + dir + "'"), std::string::npos)
        << e.what();
  }
  std::filesystem::remove_all(dir);
}

TEST(Runner, StopRequestCheckpointsAndResumeContinues) {
  Runtime runtime;
  auto dir = fresh_dir("stop");
  std::atomic<bool> stop{true};
  RunOptions o;
  o.run_dir = dir;
  o.stop = &stop;
  o.out = std::tmpfile();
  auto s = run_experiment(runtime.system(), small_experiment(2), o);
  std::fclose(o.out);
  EXPECT_TRUE(s.interrupted);
  EXPECT_EQ(s.last_step, 0);
  EXPECT_TRUE(std::filesystem::exists(dir + "/ckpt-0.manifest"));
  EXPECT_EQ(run(runtime, small_experiment(2), dir, 0, true).last_step, 40);
  std::filesystem::remove_all(dir);
}
