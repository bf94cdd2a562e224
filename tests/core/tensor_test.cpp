#include <gtest/gtest.h>

#include <cmath>

#include "core/random.hpp"
#include "core/tensor.hpp"

using namespace troupe;

TEST(Tensor, CopyOfHandleSharesBufferCloneDoesNot) {
  auto a = Tensor::filled<float>({4, 3}, 2.0f);
  Tensor b = a;
  EXPECT_TRUE(b.shares_buffer_with(a));
  Tensor c = a.clone();
  EXPECT_FALSE(c.shares_buffer_with(a));
  EXPECT_TRUE(c.bitwise_equal(a));
  c.data<float>()[0] = 7.0f;
  EXPECT_EQ(a.data<float>()[0], 2.0f);
}

TEST(Tensor, WrongTypeAccessNamesBothTypes) {
  auto a = Tensor::zeros(DType::int32, {2});
  try {
    a.data<float>();
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("holds int32, accessed as float32"), std::string::npos);
  }
}

TEST(Tensor, SliceRowsIsAViewWithOffset) {
  auto a = Tensor::from_vector<int64_t>({3, 2}, {0, 1, 2, 3, 4, 5});
  auto s = a.slice_rows(1, 3);
  EXPECT_TRUE(s.shares_buffer_with(a));
  EXPECT_EQ(s.shape(), Shape({2, 2}));
  EXPECT_EQ(s.to_vector<int64_t>(), (std::vector<int64_t>{2, 3, 4, 5}));
  EXPECT_THROW(a.slice_rows(2, 4), Error);
}

TEST(Tensor, ReshapeChecksElementCount) {
  auto a = Tensor::zeros(DType::float64, {6});
  EXPECT_EQ(a.reshape({2, 3}).shape(), Shape({2, 3}));
  EXPECT_THROW(a.reshape({4}), Error);
  EXPECT_THROW(Shape({2, -1}), Error);
}

TEST(Philox, MatchesRandom123KnownAnswer) {
  // Random123 kat_vectors: philox4x32 10 rounds, counter 0, key 0.
  Philox p(0);
  auto b = p.block(0);
  EXPECT_EQ(b[0], 0x6627e8d5u);
  EXPECT_EQ(b[1], 0xe169c58du);
  EXPECT_EQ(b[2], 0xbc57ac4cu);
  EXPECT_EQ(b[3], 0x9b00dbd8u);
}

TEST(Tensor, RandomFillsAreDeterministicAndInRange) {
  auto a = Tensor::random_uniform({1000}, 42, -1.0, 1.0);
  auto b = Tensor::random_uniform({1000}, 42, -1.0, 1.0);
  auto c = Tensor::random_uniform({1000}, 43, -1.0, 1.0);
  EXPECT_TRUE(a.bitwise_equal(b));
  EXPECT_FALSE(a.bitwise_equal(c));
  double mean = 0;
  for (float v : a.to_vector<float>()) {
    EXPECT_GE(v, -1.0f);
    EXPECT_LT(v, 1.0f);
    mean += v;
  }
  EXPECT_NEAR(mean / 1000, 0.0, 0.1);
  auto n = Tensor::random_normal({20000}, 7, 0.0, 2.0, DType::float64).to_vector<double>();
  double m = 0, v = 0;
  for (double x : n) m += x;
  m /= n.size();
  for (double x : n) v += (x - m) * (x - m);
  EXPECT_NEAR(m, 0.0, 0.05);
  EXPECT_NEAR(std::sqrt(v / n.size()), 2.0, 0.05);
}
