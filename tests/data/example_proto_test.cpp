// Hand-written tf.train.Example wire format: known bytes, round trips, malformed input.
#include "core/data/example_proto.hpp"
#include "data_test_util.hpp"

using namespace troupe;
using namespace troupe::data;
using namespace troupe::data::testing;

TEST(ExampleProto, EncodesKnownBytes) {
  // Example{features{feature{key:"a" value{int64_list{value:[1, 300]}}}}}, as protoc encodes it:
  // int64 300 is the varint AC 02.
  Example ex{{"a", Feature::of_int64s({1, 300})}};
  std::string list("\x0a\x03\x01\xac\x02", 5);
  std::string feature = std::string("\x1a\x05", 2) + list;
  std::string entry = std::string(
                          "\x0a\x01"
                          "a"
                          "\x12\x07",
                          5) +
                      feature;
  std::string features = std::string("\x0a", 1) + char(entry.size()) + entry;
  std::string example = std::string("\x0a", 1) + char(features.size()) + features;
  EXPECT_EQ(encode_example(ex), example);
}

TEST(ExampleProto, RoundTripsEveryKind) {
  Example ex{{"f", Feature::of_floats({1.5f, -2.0f, 3.25f})},
             {"i", Feature::of_int64s({-1, 0, int64_t(1) << 40})},
             {"b", Feature::of_bytes({"x", "", std::string("\0y", 2)})},
             {"empty", Feature::of_floats({})}};
  EXPECT_EQ(decode_example(encode_example(ex)), ex);
}

TEST(ExampleProto, ParsesUnpackedListsAndSkipsUnknownFields) {
  // FloatList with two unpacked fixed32 values (tag 0x0d), Int64List unpacked (tag 0x08), plus an
  // unknown varint field 9 in the Feature map entry.
  std::string floats("\x0d\x00\x00\x80\x3f\x0d\x00\x00\x00\x40", 10);  // 1.0f, 2.0f
  std::string feature = std::string("\x12", 1) + char(floats.size()) + floats;
  std::string entry = std::string(
                          "\x0a\x01"
                          "v"
                          "\x48\x05\x12",
                          6) +
                      char(feature.size()) + feature;
  std::string features = std::string("\x0a", 1) + char(entry.size()) + entry;
  std::string record = std::string("\x0a", 1) + char(features.size()) + features;
  Example ex = decode_example(record);
  ASSERT_EQ(ex.count("v"), 1u);
  EXPECT_EQ(ex["v"].floats, (std::vector<float>{1.0f, 2.0f}));
}

TEST(ExampleProto, MalformedBytesAreDataLoss) {
  std::string record = encode_example({{"a", Feature::of_int64s({1, 2, 3})}});
  EXPECT_ERROR_CONTAINS(decode_example(record.substr(0, record.size() - 2)),
                        "malformed tf.train.Example");
  EXPECT_ERROR_CONTAINS(decode_example(std::string("\x0b", 1)), "unsupported wire type 3");
}

TEST(ExampleProto, MatchesProtocEncoding) {
  // `protoc --encode=troupe.proto.Example messages/proto/example.proto` of
  // features { feature { key: "a" value { int64_list { value: [1, 300] } } }
  //            feature { key: "f" value { float_list { value: [1.5, -2] } } } }
  const unsigned char protoc_bytes[] = {0x0a, 0x21, 0x0a, 0x0c, 0x0a, 0x01, 0x61, 0x12, 0x07,
                                        0x1a, 0x05, 0x0a, 0x03, 0x01, 0xac, 0x02, 0x0a, 0x11,
                                        0x0a, 0x01, 0x66, 0x12, 0x0c, 0x12, 0x0a, 0x0a, 0x08,
                                        0x00, 0x00, 0xc0, 0x3f, 0x00, 0x00, 0x00, 0xc0};
  std::string want(reinterpret_cast<const char*>(protoc_bytes), sizeof protoc_bytes);
  Example ex{{"a", Feature::of_int64s({1, 300})}, {"f", Feature::of_floats({1.5f, -2.0f})}};
  EXPECT_EQ(encode_example(ex), want);
  EXPECT_EQ(decode_example(want), ex);
}

// Found by fuzz_tf_example: an empty packed float list (field 1, length 0) made copy_floats call
// memcpy with the caller's null pointer (an empty std::vector's data()), undefined behaviour.
TEST(ExampleProto, EmptyPackedFloatListCopiesIntoNullDestination) {
  FeatureView view{FeatureKind::float_list, std::string_view("\x0a\x00", 2)};
  EXPECT_EQ(view.size(), 0u);
  view.copy_floats(nullptr);  // under UBSan (make sanitize) this was the finding
  FeatureView odd{FeatureKind::float_list, std::string_view("\x0a\x03\x00\x00\x00", 5)};
  try {
    std::vector<float> out(4);
    odd.copy_floats(out.data());
    FAIL() << "a 3-byte packed float list was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("packed float list of 3 bytes"), std::string::npos)
        << e.what();
  }
}
