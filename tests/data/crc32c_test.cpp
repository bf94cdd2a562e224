// CRC32C against the standard check value and the RFC 3720 (iSCSI) B.4 vectors.
#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

#include "core/crc32c.hpp"
#include "core/random.hpp"

using namespace troupe;

namespace {
std::vector<uint8_t> bytes_of(size_t n, int start, int step) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = uint8_t(start + step * int(i));
  return v;
}
}  // namespace

TEST(Crc32c, CheckValue) {
  EXPECT_EQ(crc32c("123456789"), 0xE3069283u);
  EXPECT_EQ(crc32c_extend_portable(0, "123456789", 9), 0xE3069283u);
  EXPECT_EQ(crc32c(""), 0u);
}

TEST(Crc32c, Rfc3720Vectors) {
  std::vector<uint8_t> zeros(32, 0), ones(32, 0xff);
  auto up = bytes_of(32, 0, 1), down = bytes_of(32, 31, -1);
  for (auto fn : {&crc32c_extend, &crc32c_extend_portable}) {
    EXPECT_EQ(fn(0, zeros.data(), 32), 0x8A9136AAu);
    EXPECT_EQ(fn(0, ones.data(), 32), 0x62A8AB43u);
    EXPECT_EQ(fn(0, up.data(), 32), 0x46DD794Eu);
    EXPECT_EQ(fn(0, down.data(), 32), 0x113FDB5Cu);
  }
}

TEST(Crc32c, HardwareAndPortableAgreeOnEveryLengthAndAlignment) {
  Philox rng(7);
  std::vector<uint8_t> data(300);
  for (size_t i = 0; i < data.size(); ++i) data[i] = uint8_t(rng.bits(i));
  for (size_t start = 0; start < 9; ++start)
    for (size_t len = 0; len + start <= data.size(); len += 7)
      ASSERT_EQ(crc32c_extend(0, data.data() + start, len),
                crc32c_extend_portable(0, data.data() + start, len))
          << "start " << start << " len " << len << " hw " << crc32c_uses_hardware();
}

TEST(Crc32c, ExtendEqualsWhole) {
  std::string s = "The quick brown fox jumps over the lazy dog";
  uint32_t part = crc32c_extend(crc32c(s.data(), 10), s.data() + 10, s.size() - 10);
  EXPECT_EQ(part, crc32c(s));
}

TEST(Crc32c, MaskRoundTripsAndMatchesTFRecordConstant) {
  EXPECT_EQ(crc32c_mask(0), 0xa282ead8u);
  for (uint32_t c : {0u, 1u, 0xE3069283u, 0xffffffffu}) EXPECT_EQ(crc32c_unmask(crc32c_mask(c)), c);
}

// Lengths past 3 x 256 and 3 x 8192 bytes take the three-chain blocks joined by the zeros tables:
// every block size, remainder and misalignment must give the portable result.
TEST(Crc32c, ThreeChainBlocksAgreeWithPortableAcrossBlockSizesAndAlignments) {
  Philox rng(11);
  std::vector<uint8_t> data(2 * 3 * 8192 + 3 * 3 * 256 + 64);
  for (size_t i = 0; i < data.size(); ++i) data[i] = uint8_t(rng.bits(i));
  for (size_t start : {0, 1, 5, 8})
    for (size_t len : {767, 768, 775, 3 * 8192 - 1, 3 * 8192, 3 * 8192 + 3 * 256 + 9,
                       2 * 3 * 8192 + 2 * 3 * 256 + 17, 2 * 3 * 8192 + 3 * 3 * 256 + 55})
      ASSERT_EQ(crc32c_extend(0x1234567u, data.data() + start, len),
                crc32c_extend_portable(0x1234567u, data.data() + start, len))
          << "start " << start << " len " << len;
}
