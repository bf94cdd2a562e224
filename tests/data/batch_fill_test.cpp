// batch() over synthetic data writes examples straight into the batch's rows, and keeps the
// first epoch for the repeats when asked: the batches must be the bytes the element-by-element
// path (one tensor per example, stacked) gives, for every seed, shape, label type and epoch.
#include "core/data/file_sources.hpp"
#include "core/data/map_rows.hpp"
#include "core/data/synthetic.hpp"
#include "data_test_util.hpp"

using namespace troupe;
using namespace troupe::data;
using namespace troupe::data::testing;

namespace {

// The same elements through map(), which makes a tensor per example: batch() then stacks them
// as it did before it could fill rows.
Dataset element_by_element(const Dataset& ds) {
  return ds.map([](const Element& e) { return e; });
}

bool fills_rows(const Dataset& ds) { return ds.node()->make_iterator({})->fills_rows(); }

}  // namespace

TEST(BatchFill, ClassificationBatchesAreTheBytesOfStackedExamples) {
  for (uint64_t seed : {0u, 7u, 42u})
    for (int64_t features : {1, 5, 784})
      for (DType label : {DType::int64, DType::int32})
        for (int64_t cache : {int64_t(0), int64_t(1) << 30}) {
          ClassificationOptions o;
          o.num_examples = 50;
          o.num_features = features;
          o.num_classes = 10;
          o.seed = seed;
          o.label_dtype = label;
          o.cache_bytes = cache;
          auto ds = synthetic_classification(o);
          const std::string what = "seed " + std::to_string(seed) + ", " +
                                   std::to_string(features) + " features, cache " +
                                   std::to_string(cache);
          auto fast = ds.repeat(3).batch(16);  // 150 examples: 9 full batches and 6 rows
          ASSERT_TRUE(fills_rows(ds.repeat(3))) << what;
          ASSERT_FALSE(fills_rows(element_by_element(ds).repeat(3))) << what;
          expect_same_batches(fast, element_by_element(ds).repeat(3).batch(16), 12, what);
          expect_same_batches(ds.repeat().batch(16, true),
                              element_by_element(ds).repeat().batch(16, true), 20, what);
        }
}

TEST(BatchFill, RegressionBatchesAreTheBytesOfStackedExamples) {
  for (uint64_t seed : {1u, 9u})
    for (int64_t targets : {1, 3})
      for (int64_t cache : {int64_t(0), int64_t(1) << 20}) {
        RegressionOptions o;
        o.num_examples = 37;
        o.num_features = 11;
        o.num_targets = targets;
        o.seed = seed;
        o.cache_bytes = cache;
        auto ds = synthetic_regression(o);
        const std::string what = "seed " + std::to_string(seed) + ", " + std::to_string(targets) +
                                 " targets, cache " + std::to_string(cache);
        expect_same_batches(ds.repeat().take(100).batch(8),
                            element_by_element(ds).repeat().take(100).batch(8), 14, what);
      }
}

TEST(BatchFill, ACacheTooSmallForTheDataGivesTheSameBatches) {
  ClassificationOptions o;
  o.num_examples = 40;
  o.num_features = 3;
  o.seed = 3;
  o.cache_bytes = 40 * (3 * 4 + 8) - 1;  // one byte short of every example
  auto small = synthetic_classification(o);
  o.cache_bytes = 0;
  expect_same_batches(small.repeat().batch(12, true),
                      element_by_element(synthetic_classification(o)).repeat().batch(12, true), 10,
                      "budget one byte short");
}

TEST(BatchFill, SavedPositionsResumeTheFilledBatches) {
  ClassificationOptions o;
  o.num_examples = 30;
  o.num_features = 4;
  o.seed = 11;
  o.cache_bytes = 1 << 20;
  auto ds = synthetic_classification(o).repeat().batch(8, true);
  auto it = ds.make_iterator();
  for (int i = 0; i < 5; ++i) it.next();  // past the first epoch
  std::string state = it.save();
  auto expected = it.next();
  auto resumed = ds.make_iterator();
  resumed.restore(state);
  auto got = resumed.next();
  ASSERT_TRUE(expected && got);
  for (size_t c = 0; c < 2; ++c) EXPECT_TRUE((*expected)[c].bitwise_equal((*got)[c]));
}

TEST(BatchFill, ABatchLargerThanTheDataAllocatesOnlyTheRowsThereAre) {
  ClassificationOptions o;
  o.num_examples = 10;
  o.num_features = 784;
  auto ds = synthetic_classification(o);
  // 2^40 rows of 784 floats would be 3.5 PB: the batch holds the 10 there are.
  const int64_t huge = int64_t(1) << 40;
  expect_same_batches(ds.batch(huge), element_by_element(ds).batch(huge), 2, "batch 2^40");
  expect_same_batches(ds.take(7).batch(huge), element_by_element(ds).take(7).batch(huge), 2,
                      "take 7, batch 2^40");
  EXPECT_FALSE(ds.batch(huge, /*drop_remainder=*/true).make_iterator().next().has_value());
  auto it = ds.batch(huge).make_iterator();
  EXPECT_EQ(it.next()->at(0).shape(), (Shape{10, 784}));
}

TEST(BatchFill, NegativeCacheBytesAreRefusedByName) {
  ClassificationOptions c;
  c.cache_bytes = -1;
  EXPECT_EQ(error_of([&] { synthetic_classification(c); }),
            "synthetic_classification: cache_bytes must be >= 0, got -1");
  RegressionOptions r;
  r.cache_bytes = -5;
  EXPECT_EQ(error_of([&] { synthetic_regression(r); }),
            "synthetic_regression: cache_bytes must be >= 0, got -5");
}

// 23 records of a float32[3] and an int64[2] feature (plus one the spec does not read).
std::vector<Example> tfrecord_examples() {
  std::vector<Example> out;
  for (int i = 0; i < 23; ++i)
    out.push_back({{"x", Feature::of_floats({float(i) * 0.25f, -float(i), 1e-7f * float(i)})},
                   {"ids", Feature::of_int64s({i, int64_t(1) << 40})},
                   {"unused", Feature::of_bytes({"r" + std::to_string(i)})}});
  return out;
}
const std::vector<FeatureSpec> kRecordSpec = {{"ids", DType::int64, {2}},
                                              {"x", DType::float32, {3}}};

TEST(BatchFill, TFRecordBatchesAreTheBytesOfStackedRecords) {
  auto a = temp_path("a.tfrecord"), b = temp_path("b.tfrecord");
  write_examples(a, tfrecord_examples());
  write_examples(b, tfrecord_examples());
  auto ds = tfrecord_dataset({a, b}, kRecordSpec);
  ASSERT_TRUE(fills_rows(ds));
  for (int64_t n : {1, 5, 16, 64})  // batches across the file boundary and a short last one
    expect_same_batches(ds.batch(n), element_by_element(ds).batch(n), 50,
                        "batch " + std::to_string(n));
  expect_same_batches(ds.repeat(2).batch(10, true),
                      element_by_element(ds).repeat(2).batch(10, true), 10,
                      "repeated, remainder dropped");
}

TEST(BatchFill, ABadTFRecordFeatureFailsTheFilledBatchNamingFeatureAndRecord) {
  auto path = temp_path("bad.tfrecord");
  auto ex = tfrecord_examples();
  ex[6]["x"] = Feature::of_floats({1, 2});
  ex[9]["ids"] = Feature::of_floats({1, 2});
  write_examples(path, ex);
  auto it = tfrecord_dataset({path}, kRecordSpec).batch(4).make_iterator();
  it.next();  // records 0-3
  EXPECT_ERROR_CONTAINS(it.next(), "feature 'x' in record 6 (byte offset ");
  EXPECT_ERROR_CONTAINS(tfrecord_dataset({path}, kRecordSpec).batch(8).make_iterator().next(),
                        "has 2 values, the spec shape [3] needs 3");
  ex[6]["x"] = Feature::of_floats({1, 2, 3});
  write_examples(path, ex);
  auto rest = tfrecord_dataset({path}, kRecordSpec).batch(4).make_iterator();
  rest.next();
  rest.next();
  EXPECT_ERROR_CONTAINS(rest.next(), "feature 'ids' in record 9 (byte offset ");
  EXPECT_ERROR_CONTAINS(tfrecord_dataset({path}, kRecordSpec).batch(12).make_iterator().next(),
                        "is a float_list, the spec wants int64");
  ex[9].erase("ids");
  write_examples(path, ex);
  EXPECT_ERROR_CONTAINS(tfrecord_dataset({path}, kRecordSpec).batch(12).make_iterator().next(),
                        "feature 'ids' is missing in record 9");
}

TEST(MapRows, FillsBatchRowsThroughTheConversionWithTheBytesOfTheElementPath) {
  ClassificationOptions o;
  o.num_examples = 20;
  o.num_features = 3;
  o.seed = 5;
  // (x float32[3], label int64) -> (x doubled float32[3], label + 1 as float32[1]).
  auto convert = [](const std::vector<const void*>& in, const RowDestination& out) {
    const float* x = static_cast<const float*>(in[0]);
    for (int j = 0; j < 3; ++j) static_cast<float*>(out[0])[j] = 2 * x[j];
    *static_cast<float*>(out[1]) = float(*static_cast<const int64_t*>(in[1]) + 1);
  };
  ElementSpec spec{{DType::float32, {3}}, {DType::float32, {1}}};
  auto mapped = map_rows(synthetic_classification(o), convert, spec);
  EXPECT_EQ(spec_to_string(mapped.element_spec()), "(float32[3], float32[1])");
  ASSERT_TRUE(fills_rows(mapped.repeat()));
  expect_same_batches(mapped.repeat().batch(6), element_by_element(mapped).repeat().batch(6), 8,
                      "map_rows");
  // Over a source that cannot fill rows it maps element by element.
  auto slices = Dataset::from_tensor_slices({Tensor::from_vector<float>({2, 3}, {1, 2, 3, 4, 5, 6}),
                                             Tensor::from_vector<int64_t>({2}, {7, 8})});
  auto it = map_rows(slices, convert, spec).batch(2).make_iterator();
  auto b = it.next();
  ASSERT_TRUE(b);
  EXPECT_EQ((*b)[0].to_vector<float>(), (std::vector<float>{2, 4, 6, 8, 10, 12}));
  EXPECT_EQ((*b)[1].to_vector<float>(), (std::vector<float>{8, 9}));
}

TEST(MapRows, UnknownShapesAndAnEmptyFunctionAreRefused) {
  auto convert = [](const std::vector<const void*>&, const RowDestination&) {};
  EXPECT_EQ(error_of([&] {
              map_rows(Dataset::range(0, 4).batch(2), convert, {{DType::int64, {2}}});
            }),
            "map_rows: the input spec (int64[?]) has unknown dimensions");
  EXPECT_EQ(error_of([&] {
              map_rows(Dataset::range(0, 4), convert, {{DType::int64, {-1}}});
            }),
            "map_rows: the output spec (int64[?]) has unknown dimensions");
  EXPECT_EQ(error_of([&] {
              map_rows(Dataset::range(0, 4), nullptr, {{DType::int64, {}}});
            }),
            "map_rows: empty function");
}
