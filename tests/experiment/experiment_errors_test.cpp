// Experiment files: each error class, with the exact key path and line:column in the message.
#include "tests/experiment/experiment_test_util.hpp"

using troupe::testing::parse_error;
using troupe::testing::replace_line;
using troupe::testing::valid_experiment_yaml;

namespace {
std::string with_line(const std::string& prefix, const std::string& line) {
  return replace_line(valid_experiment_yaml(), prefix, line);
}
}  // namespace

TEST(ExperimentErrors, WrongTypeNamesKeyLineAndColumnOfTheValue) {
  std::string line = "model: {kind: mlp, input_dim: 784, hidden: [256, abc], classes: 10}";
  auto column = std::to_string(line.find("abc") + 1);
  EXPECT_EQ(parse_error(with_line("model:", line)),
            "experiment.yaml:4:" + column +
                ": model.hidden[1]: expected a positive integer, "
                "got \"abc\"");
}

TEST(ExperimentErrors, UnknownKeyListsTheKnownOnes) {
  auto err = parse_error(with_line("train:", "train: {steps: 1, epochs: 3}"));
  EXPECT_NE(err.find("experiment.yaml:7:"), std::string::npos) << err;
  EXPECT_NE(err.find("train.epochs: unknown key (expected one of: checkpoint_dir, "
                     "checkpoint_every, flush_denormals, keep, log_every, on_nan, step, steps, "
                     "steps_per_execution)"),
            std::string::npos)
      << err;
}

TEST(ExperimentErrors, MissingRequiredKeyPointsAtItsSection) {
  auto err = parse_error(with_line("optimizer:", "optimizer: {kind: sgd}"));
  EXPECT_EQ(err, "experiment.yaml:6:1: optimizer.learning_rate: required key is missing");
}

TEST(ExperimentErrors, QuotedNumberIsAString) {
  auto err = parse_error(with_line("train:", "train: {steps: \"10\"}"));
  EXPECT_NE(err.find("train.steps: expected a positive integer, got \"10\""), std::string::npos)
      << err;
}

TEST(ExperimentErrors, MappingWhereAScalarBelongs) {
  auto err = parse_error(with_line("train:", "train: {steps: {n: 1}}"));
  EXPECT_NE(err.find("train.steps: expected a positive integer, got a mapping"), std::string::npos)
      << err;
}

TEST(ExperimentErrors, ClassesBelowTwo) {
  auto err = parse_error(with_line("model:",
                                   "model: {kind: mlp, input_dim: 784, hidden: [8], "
                                   "classes: 1}"));
  EXPECT_NE(err.find("model.classes: a classifier needs at least 2 classes, got 1"),
            std::string::npos)
      << err;
}

TEST(ExperimentErrors, HiddenWithANonMlpModel) {
  auto err = parse_error(with_line("model:",
                                   "model: {kind: softmax, input_dim: 784, "
                                   "hidden: [8], classes: 10}"));
  EXPECT_NE(err.find("model.hidden: not used by model kind softmax"), std::string::npos) << err;
}

TEST(ExperimentErrors, NcclWithCpuDevices) {
  auto err = parse_error(with_line("strategy:",
                                   "strategy: {kind: mirrored, devices: [CPU:0], "
                                   "cross_device_ops: {kind: nccl}}"));
  EXPECT_NE(err.find("strategy.cross_device_ops.kind: nccl needs GPU devices, but devices[0] "
                     "is CPU:0"),
            std::string::npos)
      << err;
}

TEST(ExperimentErrors, CheckpointEveryWithoutDirectory) {
  auto err = parse_error(with_line("train:", "train: {steps: 10, checkpoint_every: 5}"));
  EXPECT_NE(err.find("experiment.yaml:7:"), std::string::npos) << err;
  EXPECT_NE(err.find("train.checkpoint_every: checkpoint_every needs checkpoint_dir"),
            std::string::npos)
      << err;
}

TEST(ExperimentErrors, NegativeNumPacks) {
  auto err = parse_error(with_line("strategy:",
                                   "strategy: {kind: mirrored, cross_device_ops: "
                                   "{kind: ring, num_packs: -2}}"));
  EXPECT_NE(err.find("strategy.cross_device_ops.num_packs: expected a non-negative integer, "
                     "got \"-2\""),
            std::string::npos)
      << err;
}

TEST(ExperimentErrors, DuplicateDevicesAfterCanonicalization) {
  auto err = parse_error(with_line("strategy:",
                                   "strategy: {kind: mirrored, devices: "
                                   "[CPU:0, /job:localhost/device:CPU:0]}"));
  EXPECT_NE(err.find("strategy.devices[1]: duplicate device"), std::string::npos) << err;
}

TEST(ExperimentErrors, LearningRateMustBePositive) {
  auto err = parse_error(with_line("optimizer:", "optimizer: {kind: sgd, learning_rate: 0}"));
  EXPECT_NE(err.find("optimizer.learning_rate: expected a positive number, got \"0\""),
            std::string::npos)
      << err;
}

TEST(ExperimentErrors, InputDimMustMatchTheData) {
  auto err = parse_error(with_line("data:",
                                   "data: {kind: synthetic_classification, examples: "
                                   "10, global_batch: 2, input_dim: 100}"));
  EXPECT_NE(err.find("model.input_dim: model.input_dim 784 does not match the data's input "
                     "width 100"),
            std::string::npos)
      << err;
}

TEST(ExperimentErrors, FromFunctionNeedsAnEvenSplit) {
  std::string yaml = with_line("data:",
                               "data: {kind: synthetic_classification, examples: 10, "
                               "global_batch: 7, distribute: from_function}");
  auto err = parse_error(yaml);
  EXPECT_NE(err.find("data.global_batch: distribute: from_function splits the batch evenly, but "
                     "global_batch 7 is not divisible by 2 replicas"),
            std::string::npos)
      << err;
}

TEST(ExperimentErrors, InvalidYamlNamesThePosition) {
  auto err = parse_error("name: x\nmodel: {kind: [mlp\n");
  EXPECT_NE(err.find("experiment.yaml:"), std::string::npos) << err;
  EXPECT_NE(err.find("invalid YAML"), std::string::npos) << err;
}

TEST(ExperimentErrors, EmptyDocumentIsNotAnExperiment) {
  EXPECT_EQ(parse_error(""),
            "experiment.yaml:1:1: expected a mapping of experiment keys, got "
            "nothing");
}
