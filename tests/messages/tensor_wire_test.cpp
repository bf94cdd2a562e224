// Tensor fields on the wire: one blob, exact round trips, and clean rejection of malformed bytes.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "messages/tensor_msg.hpp"
#include "tests/messages/wire_test_util.hpp"

using namespace troupe;
using troupe::testing::encode;
using troupe::testing::text_of;

namespace {

tensor_msg decode_ok(const std::vector<char>& bytes) {
  tensor_msg out;
  auto err = wire::from_bytes(bytes, out);
  EXPECT_FALSE(err) << text_of(err);
  return out;
}

std::string decode_error(const std::vector<char>& bytes) {
  tensor_msg out;
  auto err = wire::from_bytes(bytes, out);
  EXPECT_TRUE(err) << "malformed bytes were accepted";
  return text_of(err);
}

// Header layout (see tensor_wire.hpp) after the 8-byte id: dtype u8, rank u32, dims i64, bytes u64.
constexpr size_t kIdBytes = 8;
constexpr size_t kDtypeAt = kIdBytes;
constexpr size_t kRankAt = kDtypeAt + 1;
constexpr size_t kFirstDimAt = kRankAt + 4;

// CAF 0.17's binary serializer writes integers in network (big-endian) byte order.
template <class T>
void patch(std::vector<char>& bytes, size_t at, T value) {
  auto u = static_cast<uint64_t>(value);
  for (size_t i = 0; i < sizeof(T); ++i) bytes[at + i] = char(u >> (8 * (sizeof(T) - 1 - i)));
}

}  // namespace

TEST(TensorWire, RoundTripEveryDtypeBitExact) {
  for (DType dtype : {DType::float32, DType::float64, DType::int32, DType::int64}) {
    tensor_msg m{42, Tensor::random_uniform({3, 5, 2}, 7, -100.0, 100.0, dtype)};
    tensor_msg back = decode_ok(encode(m));
    EXPECT_EQ(back.id, 42u);
    EXPECT_TRUE(back.tensor.bitwise_equal(m.tensor)) << dtype_name(dtype);
    EXPECT_FALSE(back.tensor.shares_buffer_with(m.tensor));
  }
}

TEST(TensorWire, PayloadIsOneContiguousBlobAfterHeader) {
  auto t = Tensor::from_vector<float>({2, 2}, {1.f, 2.f, 3.f, 4.f});
  auto bytes = encode(tensor_msg{1, t});
  size_t header = kFirstDimAt + 2 * 8 + 8;
  ASSERT_EQ(bytes.size(), header + 16);
  EXPECT_EQ(std::memcmp(bytes.data() + header, t.raw_data(), 16), 0);
}

TEST(TensorWire, ScalarEmptyAndUndefinedTensors) {
  auto scalar = decode_ok(encode(tensor_msg{1, Tensor::from_scalar<double>(2.5)}));
  EXPECT_EQ(scalar.tensor.shape().rank(), 0u);
  EXPECT_EQ(scalar.tensor.scalar<double>(), 2.5);
  auto empty = decode_ok(encode(tensor_msg{2, Tensor::zeros(DType::int32, {0, 4})}));
  EXPECT_EQ(empty.tensor.shape(), Shape({0, 4}));
  auto undefined = decode_ok(encode(tensor_msg{3, Tensor{}}));
  EXPECT_FALSE(undefined.tensor.defined());
}

TEST(TensorWire, SliceViewSendsOnlyItsRows) {
  auto base = Tensor::from_vector<int64_t>({3, 2}, {1, 2, 3, 4, 5, 6});
  auto back = decode_ok(encode(tensor_msg{9, base.slice_rows(1, 3)}));
  EXPECT_EQ(back.tensor.to_vector<int64_t>(), (std::vector<int64_t>{3, 4, 5, 6}));
}

TEST(TensorWire, RejectsUnknownDtypeByValue) {
  auto bytes = encode(tensor_msg{1, Tensor::zeros(DType::float32, {2})});
  patch<uint8_t>(bytes, kDtypeAt, 7);
  EXPECT_NE(decode_error(bytes).find("dtype value 7 is not a DType"), std::string::npos);
}

TEST(TensorWire, RejectsRankAboveBound) {
  auto bytes = encode(tensor_msg{1, Tensor::zeros(DType::float32, {2})});
  patch<uint32_t>(bytes, kRankAt, 1000000);
  EXPECT_NE(decode_error(bytes).find("rank 1000000 exceeds 32"), std::string::npos);
}

TEST(TensorWire, RejectsNegativeDimension) {
  auto bytes = encode(tensor_msg{1, Tensor::zeros(DType::float32, {2, 3})});
  patch<int64_t>(bytes, kFirstDimAt + 8, -3);
  EXPECT_NE(decode_error(bytes).find("dimension 1 is negative (-3)"), std::string::npos);
}

TEST(TensorWire, RejectsElementCountOverflow) {
  auto bytes = encode(tensor_msg{1, Tensor::zeros(DType::float64, {2, 3})});
  patch<int64_t>(bytes, kFirstDimAt, int64_t(1) << 40);
  patch<int64_t>(bytes, kFirstDimAt + 8, int64_t(1) << 40);
  EXPECT_NE(decode_error(bytes).find("element count overflows at dimension 1"), std::string::npos);
}

TEST(TensorWire, RejectsByteCountThatDisagreesWithShape) {
  auto bytes = encode(tensor_msg{1, Tensor::zeros(DType::float32, {2, 3})});
  patch<uint64_t>(bytes, kFirstDimAt + 16, 20);
  EXPECT_NE(decode_error(bytes).find("declares 20 bytes but float32 shape needs 24"),
            std::string::npos);
}

TEST(TensorWire, RefusesHugeDeclaredSizeBeforeAllocating) {
  // A consistent header claiming 8 TiB: must be refused by the remaining-bytes check, not by
  // an allocation attempt.
  auto bytes = encode(tensor_msg{1, Tensor::zeros(DType::float64, {2})});
  patch<int64_t>(bytes, kFirstDimAt, int64_t(1) << 40);
  patch<uint64_t>(bytes, kFirstDimAt + 8, uint64_t(8) << 40);
  EXPECT_NE(decode_error(bytes).find("only 16 remain"), std::string::npos);
}

TEST(TensorWire, EveryTruncatedPrefixFailsCleanly) {
  auto bytes = encode(tensor_msg{5, Tensor::random_normal({3, 4}, 1)});
  for (size_t len = 0; len < bytes.size(); ++len) {
    std::vector<char> prefix(bytes.begin(), bytes.begin() + long(len));
    tensor_msg out;
    EXPECT_TRUE(wire::from_bytes(prefix, out)) << "prefix of " << len << " bytes was accepted";
  }
}

TEST(TensorWire, TrailingBytesAreRejected) {
  auto bytes = encode(tensor_msg{5, Tensor::zeros(DType::int32, {1})});
  bytes.push_back('x');
  EXPECT_NE(decode_error(bytes).find("1 trailing bytes"), std::string::npos);
}

TEST(TensorWire, RandomBytesNeverCrash) {
  std::mt19937_64 rng(1234);
  auto valid = encode(tensor_msg{5, Tensor::random_normal({2, 3}, 1)});
  int accepted = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    std::vector<char> bytes;
    if (trial % 2 == 0) {  // pure noise of random length
      bytes.resize(rng() % 96);
      for (auto& b : bytes) b = char(rng());
    } else {  // a valid message with a few bytes flipped: exercises the deeper checks
      bytes = valid;
      for (int k = 0; k < 3; ++k) bytes[rng() % bytes.size()] = char(rng());
    }
    tensor_msg out;
    if (!wire::from_bytes(bytes, out)) {
      ++accepted;
      if (out.tensor.defined()) {
        EXPECT_EQ(out.tensor.byte_size(),
                  size_t(out.tensor.num_elements()) * dtype_size(out.tensor.dtype()));
      }
    }
  }
  EXPECT_LT(accepted, 4000);
}
