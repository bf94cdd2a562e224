// The experiment file's `eval` section: what it accepts and every refusal, with the key named.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "experiment/experiment_file.hpp"
#include "tests/experiment/experiment_test_util.hpp"

namespace troupe::testing {
namespace {

std::string with_eval(const std::string& eval) { return valid_experiment_yaml() + eval; }

TEST(EvalSection, AbsentMeansNoEvalData) {
  auto e = experiment::parse_experiment(valid_experiment_yaml());
  EXPECT_FALSE(e.has_eval());
}

TEST(EvalSection, SyntheticDataTakeTheTrainingGeneratorAndBatchDefaultsToTheGlobalBatch) {
  auto e = experiment::parse_experiment(
      with_eval("eval:\n  data: {kind: synthetic_classification, examples: 500}\n"));
  ASSERT_TRUE(e.has_eval());
  EXPECT_EQ(e.eval().data().kind(), "synthetic_classification");
  EXPECT_EQ(e.eval().data().examples(), 500);
  EXPECT_EQ(e.eval().batch(), 256);
  EXPECT_EQ(e.eval().data().global_batch(), 256);
}

TEST(EvalSection, BatchIsRead) {
  auto e = experiment::parse_experiment(
      with_eval("eval: {data: {kind: synthetic_classification, examples: 500}, batch: 100}\n"));
  EXPECT_EQ(e.eval().batch(), 100);
  EXPECT_EQ(e.eval().data().global_batch(), 100);
}

TEST(EvalSection, UnknownKeyIsNamed) {
  auto error = parse_error(
      with_eval("eval: {data: {kind: synthetic_classification, examples: 5}, steps: 3}\n"));
  EXPECT_NE(error.find("eval.steps"), std::string::npos) << error;
}

TEST(EvalSection, DataIsRequired) {
  auto error = parse_error(with_eval("eval: {batch: 3}\n"));
  EXPECT_NE(error.find("eval.data: required key is missing"), std::string::npos) << error;
}

TEST(EvalSection, BatchMustBePositive) {
  auto error = parse_error(
      with_eval("eval: {data: {kind: synthetic_classification, examples: 5}, batch: 0}\n"));
  EXPECT_NE(error.find("eval.batch"), std::string::npos) << error;
  EXPECT_NE(error.find("positive"), std::string::npos) << error;
}

TEST(EvalSection, GlobalBatchIsRefusedInFavourOfEvalBatch) {
  auto error = parse_error(
      with_eval("eval: {data: {kind: synthetic_classification, examples: 5, global_batch: 8}}\n"));
  EXPECT_NE(error.find("eval.data.global_batch: not used by evaluation"), std::string::npos)
      << error;
  EXPECT_NE(error.find("eval.batch sets the batch"), std::string::npos) << error;
}

TEST(EvalSection, TrainingPipelineKeysAreRefusedByName) {
  for (const char* key :
       {"shuffle: true", "prefetch: 2", "distribute: dataset", "auto_shard: off"}) {
    auto error = parse_error(with_eval(
        std::string("eval: {data: {kind: synthetic_classification, examples: 5, ") + key + "}}\n"));
    const std::string name = std::string(key).substr(0, std::string(key).find(':'));
    EXPECT_NE(error.find("eval.data." + name + ": not used by evaluation"), std::string::npos)
        << error;
  }
}

TEST(EvalSection, DataKeysAreCheckedAsInTheDataSection) {
  auto error = parse_error(with_eval("eval: {data: {kind: images, examples: 5}}\n"));
  EXPECT_NE(error.find("eval.data.kind"), std::string::npos) << error;
  error = parse_error(with_eval("eval: {data: {kind: synthetic_classification}}\n"));
  EXPECT_NE(error.find("eval.data.examples: required key is missing"), std::string::npos) << error;
}

TEST(EvalSection, SyntheticKindMustBeTheTrainingGenerators) {
  auto error = parse_error(with_eval("eval: {data: {kind: synthetic_regression, examples: 5}}\n"));
  EXPECT_NE(error.find("eval.data.kind: synthetic eval data are held-out examples"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("data.kind is synthetic_classification"), std::string::npos) << error;
}

TEST(EvalSection, SyntheticSizesComeFromTheTrainingData) {
  auto error = parse_error(
      with_eval("eval: {data: {kind: synthetic_classification, examples: 5, classes: 3}}\n"));
  EXPECT_NE(error.find("eval.data.classes: comes from the training data"), std::string::npos)
      << error;
}

TEST(EvalSection, FileDataMustFitTheModel) {
  auto error = parse_error(
      with_eval("eval:\n  data: {kind: csv, files: [eval.csv], label: y,\n"
                "         features: {x: {dtype: float32, shape: [3]}, y: {dtype: int64}}}\n"));
  EXPECT_NE(error.find("eval.data: does not fit the model"), std::string::npos) << error;
  EXPECT_NE(error.find("model.input_dim 784 does not match the data's input width 3"),
            std::string::npos)
      << error;
}

TEST(EvalSection, RelativeEvalFilesAreResolvedAgainstTheExperimentFile) {
  auto dir = std::filesystem::temp_directory_path() /
             ("troupe-eval-section-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string yaml =
      replace_line(valid_experiment_yaml(),
                   "model:", "model: {kind: mlp, input_dim: 3, hidden: [4], classes: 2}") +
      "eval:\n  data: {kind: csv, files: [eval.csv], label: y,\n"
      "         features: {x: {dtype: float32, shape: [3]}, y: {dtype: "
      "int64}}}\n";
  const std::string text = replace_line(
      yaml, "data:", "data: {kind: synthetic_classification, examples: 100, global_batch: 10}");
  std::ofstream((dir / "e.yaml").string()) << text;
  auto e = experiment::load_experiment((dir / "e.yaml").string());
  ASSERT_EQ(e.eval().data().files_size(), 1);
  EXPECT_EQ(e.eval().data().files(0), (dir / "eval.csv").string());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace troupe::testing
