// TFRecord framing and its error paths.
#include <fstream>

#include "core/crc32c.hpp"
#include "core/data/tfrecord.hpp"
#include "data_test_util.hpp"

using namespace troupe;
using namespace troupe::data;
using namespace troupe::data::testing;

namespace {
uint32_t le32(const std::string& s, size_t at) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = v << 8 | uint8_t(s[at + size_t(i)]);
  return v;
}
void write_raw(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}
}  // namespace

TEST(TFRecord, FramingOfTinyRecordMatchesHandComputedMaskedCrcs) {
  // Reference values computed bit by bit (polynomial 0x82F63B78) outside this code base:
  // crc32c(le64(3)) = 0x576C35E3 -> masked 0x0E4999B0; crc32c("abc") = 0x364B3FB7 -> masked
  // 0x21F1576E.
  std::string f = tfrecord_frame("abc");
  ASSERT_EQ(f.size(), 8u + 4u + 3u + 4u);
  EXPECT_EQ(f.substr(0, 8), std::string("\x03\0\0\0\0\0\0\0", 8));
  EXPECT_EQ(le32(f, 8), 0x0E4999B0u);
  EXPECT_EQ(f.substr(12, 3), "abc");
  EXPECT_EQ(le32(f, 15), 0x21F1576Eu);
  // An empty record: crc32c of nothing is 0, masked to the bare constant.
  std::string e = tfrecord_frame("");
  EXPECT_EQ(le32(e, 12), 0xa282ead8u);
}

TEST(TFRecord, WriteThenReadRoundTrip) {
  auto path = temp_path("rt.tfrecord");
  {
    TFRecordWriter w(path);
    w.write("first");
    w.write("");
    w.write(std::string(5000, 'x'));
    w.close();
  }
  TFRecordReader r(path);
  EXPECT_EQ(r.next().value(), "first");
  uint64_t second = r.offset();
  EXPECT_EQ(second, 16u + 5u);
  EXPECT_EQ(r.next().value(), "");
  EXPECT_EQ(r.next().value().size(), 5000u);
  EXPECT_FALSE(r.next());
  r.seek(second);
  EXPECT_EQ(r.next().value(), "");
}

TEST(TFRecord, CorruptDataCrcNamesFileAndOffset) {
  auto path = temp_path("bad.tfrecord");
  std::string bytes = tfrecord_frame("good") + tfrecord_frame("evil");
  bytes[20 + 12] ^= 0x01;  // flip a data bit of the second record (which starts at byte 20)
  write_raw(path, bytes);
  TFRecordReader r(path);
  EXPECT_EQ(r.next().value(), "good");
  EXPECT_ERROR_CONTAINS(r.next(), "TFRecord file '" + path +
                                      "': corrupt record at byte offset 20 (data CRC mismatch)");
}

TEST(TFRecord, CorruptLengthCrcNamesFileAndOffset) {
  auto path = temp_path("badlen.tfrecord");
  std::string bytes = tfrecord_frame("abc");
  bytes[0] = 4;  // the length no longer matches its CRC
  write_raw(path, bytes);
  TFRecordReader r(path);
  EXPECT_ERROR_CONTAINS(r.next(), "corrupt record at byte offset 0 (length CRC mismatch)");
}

TEST(TFRecord, TruncatedFileIsDataLoss) {
  auto path = temp_path("trunc.tfrecord");
  std::string bytes = tfrecord_frame("abc") + tfrecord_frame("defgh");
  write_raw(path, bytes.substr(0, bytes.size() - 3));
  TFRecordReader r(path);
  EXPECT_TRUE(r.next());
  try {
    r.next();
    FAIL() << "truncated record was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::data_loss);
    EXPECT_NE(std::string(e.what()).find("truncated record at byte offset 19"), std::string::npos)
        << e.what();
  }
  // A header cut short is also a truncation, not a clean end.
  write_raw(path, bytes.substr(0, 19 + 5));
  TFRecordReader r2(path);
  r2.next();
  EXPECT_ERROR_CONTAINS(r2.next(),
                        "truncated record at byte offset 19 (header wants 12 bytes, only 5 left)");
}

// A length whose CRC matches but that the file cannot hold (8 GiB here, in a 12-byte file) is a
// truncation found before the record buffer grows, not an 8 GiB allocation. Found from a
// near-valid fuzz seed (tests/fuzz/regressions/tfrecord/length-claims-8gib).
TEST(TFRecord, HugeLengthWithValidCrcIsRefusedBeforeAllocating) {
  auto path = temp_path("huge.tfrecord");
  std::string header(12, '\0');
  uint64_t length = uint64_t(1) << 33;
  for (int i = 0; i < 8; ++i) header[size_t(i)] = char(length >> (8 * i));
  uint32_t crc = crc32c_mask(crc32c(header.data(), 8));
  for (int i = 0; i < 4; ++i) header[size_t(8 + i)] = char(crc >> (8 * i));
  write_raw(path, header);
  TFRecordReader r(path);
  EXPECT_ERROR_CONTAINS(r.next(),
                        "truncated record at byte offset 0 (data wants 8589934596 bytes, only 0 "
                        "left)");
}

TEST(TFRecord, MissingFileIsNotFound) {
  auto path = temp_path("does_not_exist.tfrecord");
  EXPECT_ERROR_CONTAINS(TFRecordReader r(path), "TFRecord file '" + path + "': cannot open");
}
