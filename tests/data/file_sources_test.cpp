// tfrecord_dataset and csv_dataset: decoding, and every bad-input path with its message.
#include <fstream>

#include "core/data/file_sources.hpp"
#include "core/data/tfrecord.hpp"
#include "data_test_util.hpp"

using namespace troupe;
using namespace troupe::data;
using namespace troupe::data::testing;

namespace {
std::vector<Example> examples(int n) {
  std::vector<Example> out;
  for (int i = 0; i < n; ++i)
    out.push_back({{"x", Feature::of_floats({float(i), float(i) + 0.5f})},
                   {"label", Feature::of_int64s({i * 10})},
                   {"name", Feature::of_bytes({"row" + std::to_string(i)})}});
  return out;
}
const std::vector<FeatureSpec> kSpec = {{"x", DType::float32, {2}}, {"label", DType::int64, {}}};

void write_text(const std::string& path, const std::string& text) { std::ofstream(path) << text; }
}  // namespace

TEST(TFRecordDataset, DecodesExamplesByFeatureSpec) {
  auto a = temp_path("a.tfrecord"), b = temp_path("b.tfrecord");
  write_examples(a, examples(3));
  write_examples(b, examples(2));
  auto ds = tfrecord_dataset({a, b}, kSpec);
  EXPECT_EQ(spec_to_string(ds.element_spec()), "(float32[2], int64[])");
  auto it = ds.make_iterator();
  std::vector<float> xs;
  std::vector<int64_t> labels;
  while (auto e = it.next()) {
    auto x = (*e)[0].to_vector<float>();
    xs.insert(xs.end(), x.begin(), x.end());
    labels.push_back((*e)[1].scalar<int64_t>());
  }
  EXPECT_EQ(labels, (std::vector<int64_t>{0, 10, 20, 0, 10}));
  EXPECT_EQ(xs, (std::vector<float>{0, 0.5f, 1, 1.5f, 2, 2.5f, 0, 0.5f, 1, 1.5f}));
  // Batching works on top, with the static feature shape.
  EXPECT_EQ(spec_to_string(ds.batch(4).element_spec()), "(float32[?, 2], int64[?])");
}

TEST(TFRecordDataset, WrongFeatureTypeNamesFeatureAndRecord) {
  auto path = temp_path("t.tfrecord");
  auto ex = examples(3);
  ex[2]["label"] = Feature::of_floats({1.0f});
  write_examples(path, ex);
  EXPECT_ERROR_CONTAINS(count_all(tfrecord_dataset({path}, kSpec)),
                        "feature 'label' in record 2 (byte offset ");
  EXPECT_ERROR_CONTAINS(count_all(tfrecord_dataset({path}, kSpec)),
                        "of TFRecord file '" + path + "' is a float_list, the spec wants int64");
}

TEST(TFRecordDataset, WrongFeatureShapeNamesFeatureAndRecord) {
  auto path = temp_path("s.tfrecord");
  auto ex = examples(2);
  ex[1]["x"] = Feature::of_floats({1, 2, 3});
  write_examples(path, ex);
  EXPECT_ERROR_CONTAINS(count_all(tfrecord_dataset({path}, kSpec)),
                        "feature 'x' in record 1 (byte offset");
  EXPECT_ERROR_CONTAINS(count_all(tfrecord_dataset({path}, kSpec)),
                        "has 3 values, the spec shape [2] needs 2");
}

TEST(TFRecordDataset, MissingFeatureAndBadSpec) {
  auto path = temp_path("m.tfrecord");
  write_examples(path, examples(1));
  EXPECT_ERROR_CONTAINS(count_all(tfrecord_dataset({path}, {{"nope", DType::int64, {}}})),
                        "feature 'nope' is missing in record 0");
  EXPECT_ERROR_CONTAINS(tfrecord_dataset({path}, {{"x", DType::int32, {2}}}),
                        "feature 'x' has dtype int32; tf.train.Example holds float32 or int64");
}

TEST(TFRecordDataset, CorruptRecordFailsWithoutHandingOnAPartialBatch) {
  auto path = temp_path("c.tfrecord");
  write_examples(path, examples(5));
  std::string bytes;
  {
    std::ifstream f(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(f), {});
  }
  size_t third = 2 * (bytes.size() / 5);  // every record here has the same size
  bytes[third + 14] ^= 0x40;
  { std::ofstream(path, std::ios::binary) << bytes; }
  auto it = tfrecord_dataset({path}, kSpec).batch(4).make_iterator();
  EXPECT_ERROR_CONTAINS(it.next(), "TFRecord file '" + path + "': corrupt record at byte offset " +
                                       std::to_string(third) + " (data CRC mismatch)");
}

TEST(TFRecordDataset, TruncatedAndMissingFiles) {
  auto path = temp_path("tr.tfrecord");
  write_examples(path, examples(2));
  std::string bytes;
  {
    std::ifstream f(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(f), {});
  }
  { std::ofstream(path, std::ios::binary) << bytes.substr(0, bytes.size() - 1); }
  EXPECT_ERROR_CONTAINS(count_all(tfrecord_dataset({path}, kSpec)),
                        "TFRecord file '" + path + "': truncated record at byte offset " +
                            std::to_string(bytes.size() / 2));
  auto missing = temp_path("missing.tfrecord");
  EXPECT_ERROR_CONTAINS(count_all(tfrecord_dataset({missing}, kSpec)),
                        "TFRecord file '" + missing + "': cannot open");
}

TEST(CsvDataset, ParsesTypedColumnsWithHeader) {
  auto path = temp_path("d.csv");
  write_text(path, "a,b,c\n1,2.5,-3\n4,5e-1,6\r\n\n7,8,9");
  auto ds = csv_dataset({path}, {{DType::int32, DType::float32, DType::int64}, true});
  EXPECT_EQ(spec_to_string(ds.element_spec()), "(int32[], float32[], int64[])");
  auto it = ds.batch(10).make_iterator();
  auto e = it.next();
  ASSERT_TRUE(e);
  EXPECT_EQ((*e)[0].to_vector<int32_t>(), (std::vector<int32_t>{1, 4, 7}));
  EXPECT_EQ((*e)[1].to_vector<float>(), (std::vector<float>{2.5f, 0.5f, 8.0f}));
  EXPECT_EQ((*e)[2].to_vector<int64_t>(), (std::vector<int64_t>{-3, 6, 9}));
}

TEST(CsvDataset, WrongColumnCountNamesFileAndLine) {
  auto path = temp_path("bad.csv");
  write_text(path, "h1,h2\n1,2\n3\n");
  auto ds = csv_dataset({path}, {{DType::int64, DType::int64}, true});
  EXPECT_ERROR_CONTAINS(drain(ds.batch(8)), path + ":3: expected 2 columns, found 1");
}

TEST(CsvDataset, BadValueNamesFileLineAndColumn) {
  auto path = temp_path("val.csv");
  write_text(path, "1,2\n3,x4\n");
  auto ds = csv_dataset({path}, {{DType::int64, DType::float32}});
  EXPECT_ERROR_CONTAINS(drain(ds), path + ":2: column 2: 'x4' is not a valid float32");
  auto missing = temp_path("none.csv");
  EXPECT_ERROR_CONTAINS(drain(csv_dataset({missing}, {{DType::int64}})),
                        "CSV file '" + missing + "': cannot open");
}

TEST(TFRecordDataset, MalformedExampleNamesRecordAndFile) {
  auto path = temp_path("mal.tfrecord");
  {
    TFRecordWriter w(path);
    w.write(encode_example(examples(1)[0]));
    w.write(std::string("\x0a\x05\x0a", 3));  // Features claims 5 bytes, 1 follows
    w.close();
  }
  EXPECT_ERROR_CONTAINS(count_all(tfrecord_dataset({path}, kSpec)), "record 1 (byte offset ");
  EXPECT_ERROR_CONTAINS(
      count_all(tfrecord_dataset({path}, kSpec)),
      "of TFRecord file '" + path + "': malformed tf.train.Example: length 5 past the end");
}
