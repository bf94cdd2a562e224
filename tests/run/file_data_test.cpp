// data.kind csv (and the file features of tfrecord/csv) in `troupe run`: CSV rows train, several
// features are concatenated in the order the file lists them, and data.examples caps the data.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "core/data/file_sources.hpp"
#include "experiment/experiment_file.hpp"
#include "experiment/run/experiment_input.hpp"
#include "tests/run/run_test_util.hpp"

using namespace troupe;
using troupe::testing::fresh_dir;
using troupe::testing::run;

namespace {

// Two classes on either side of the plane a + b0 - b1 = 0; columns a, b[0], b[1], label.
std::string write_blobs_csv(const std::string& dir, int rows) {
  std::filesystem::create_directories(dir);
  std::string path = dir + "/blobs.csv";
  std::ofstream out(path);
  out << "a,b0,b1,label\n";
  std::mt19937 rng(17);
  std::normal_distribution<double> noise(0.0, 0.5);
  for (int r = 0; r < rows; ++r) {
    int label = r % 2;
    double centre = label ? 1.5 : -1.5;
    out << centre + noise(rng) << "," << centre + noise(rng) << "," << -centre + noise(rng) << ","
        << label << "\n";
  }
  return path;
}

proto::Experiment csv_experiment(const std::string& path, const std::string& extra = "") {
  return experiment::parse_experiment(
      "name: csv\nseed: 1\n"
      "strategy: {kind: mirrored, devices: [CPU:0, CPU:1]}\n"
      "model: {kind: softmax, input_dim: 3, classes: 2}\n"
      "data: {kind: csv, files: [" +
          path + "], header: true, global_batch: 16, shuffle: true" + extra +
          ",\n"
          "       features: {a: {dtype: float64}, b: {dtype: float32, shape: [2]}, "
          "label: {dtype: int64}}, label: label}\n"
          "optimizer: {kind: sgd, learning_rate: 0.5}\n"
          "train: {steps: 60, log_every: 20}\n",
      "csv.yaml");
}

}  // namespace

TEST(FileData, CsvRowsTrainASoftmaxClassifier) {
  Runtime runtime;
  auto dir = fresh_dir("csv");
  auto path = write_blobs_csv(dir, 200);
  auto s = run(runtime, csv_experiment(path), dir + "/run");
  EXPECT_EQ(s.last_step, 60);
  EXPECT_GT(s.final_accuracy, 0.95);
  EXPECT_LT(s.final_loss, 0.2);
  std::filesystem::remove_all(dir);
}

TEST(FileData, FeaturesAreConcatenatedInFileOrderAsFloat32) {
  auto dir = fresh_dir("csv-order");
  std::filesystem::create_directories(dir);
  {
    std::ofstream out(dir + "/rows.csv");
    out << "7,1.5,2.5,0\n8,3.5,4.5,1\n";
  }
  // `z` comes first in the file although it sorts last: file order, not name order.
  auto e = experiment::parse_experiment(
      "name: order\nstrategy: {kind: one_device}\n"
      "model: {kind: softmax, input_dim: 3, classes: 2}\n"
      "data: {kind: csv, files: [" +
          dir +
          "/rows.csv], global_batch: 2,\n"
          "       features: {z: {dtype: int32}, a: {dtype: float64, shape: [2]}, "
          "y: {dtype: int64}}, label: y}\n"
          "optimizer: {kind: sgd, learning_rate: 0.1}\ntrain: {steps: 1}\n",
      "order.yaml");
  auto it = make_examples_dataset(e).make_iterator();
  auto first = it.next();
  ASSERT_TRUE(first);
  EXPECT_EQ((*first)[0].dtype(), DType::float32);
  EXPECT_EQ((*first)[0].to_vector<float>(), (std::vector<float>{7, 1.5f, 2.5f}));
  EXPECT_EQ((*first)[1].scalar<int64_t>(), 0);
  std::filesystem::remove_all(dir);
}

TEST(FileData, ExamplesKeepsTheFirstThatManyRows) {
  auto dir = fresh_dir("csv-examples");
  auto path = write_blobs_csv(dir, 50);
  int64_t rows = 0;
  for (auto it = make_examples_dataset(csv_experiment(path, ", examples: 12")).make_iterator();
       it.next();)
    ++rows;
  EXPECT_EQ(rows, 12);
  std::filesystem::remove_all(dir);
}

TEST(FileData, TFRecordExamplesFillBatchRowsWithTheValuesOfTheElementPath) {
  // x float32[2] and w int64[2] (cast to float32), concatenated in the order given; the label
  // int64, kept for softmax and cast to float32 for linear. batch() fills its rows through the
  // conversion; the same examples one by one (map in between) must give the same bytes.
  auto dir = fresh_dir("tfrecord-rows");
  std::filesystem::create_directories(dir);
  std::vector<data::Example> records;
  for (int i = 0; i < 7; ++i)
    records.push_back({{"x", data::Feature::of_floats({0.5f * float(i), -float(i)})},
                       {"w", data::Feature::of_int64s({i, 100 + i})},
                       {"y", data::Feature::of_int64s({i % 3})}});
  data::write_examples(dir + "/r.tfrecord", records);
  for (const std::string model : {"softmax", "linear"}) {
    auto e = experiment::parse_experiment(
        "name: rows\nstrategy: {kind: one_device}\n"
        "model: {kind: " +
            model + ", input_dim: 4" + (model == "softmax" ? ", classes: 3" : "") +
            "}\n"
            "data: {kind: tfrecord, files: [" +
            dir +
            "/r.tfrecord], global_batch: 3,\n"
            "       features: {w: {dtype: int64, shape: [2]}, x: {dtype: float32, shape: [2]}, "
            "y: {dtype: int64}}, label: y}\n"
            "optimizer: {kind: sgd, learning_rate: 0.1}\ntrain: {steps: 1}\n",
        "rows.yaml");
    auto filled = make_examples_dataset(e).batch(3).make_iterator();
    auto stacked = make_examples_dataset(e)
                       .map([](const data::Element& x) { return x; })
                       .batch(3)
                       .make_iterator();
    auto first = filled.next();
    ASSERT_TRUE(first);
    EXPECT_EQ((*first)[0].to_vector<float>(),
              (std::vector<float>{0, 100, 0, -0, 1, 101, 0.5f, -1, 2, 102, 1, -2}))
        << model;
    if (model == "softmax")
      EXPECT_EQ((*first)[1].to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2}));
    else
      EXPECT_EQ((*first)[1].to_vector<float>(), (std::vector<float>{0, 1, 2}));
    auto reference = stacked.next();
    for (int b = 0; b < 3; ++b) {
      ASSERT_EQ(first.has_value(), reference.has_value()) << model << " batch " << b;
      if (!first) break;
      for (size_t c = 0; c < 2; ++c)
        EXPECT_TRUE((*first)[c].bitwise_equal((*reference)[c])) << model << " batch " << b;
      first = filled.next();
      reference = stacked.next();
    }
  }
  std::filesystem::remove_all(dir);
}
