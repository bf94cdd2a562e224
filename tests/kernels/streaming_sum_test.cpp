// host_add_into_finite_streaming: the collectives' 2-input sum with non-temporal stores, for
// results larger than the cache. Every vector path the CPU runs must give the cached path's bytes
// and finiteness answer.

#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <vector>

#include "kernels/host_accumulate.hpp"

namespace troupe {
namespace {

constexpr int64_t kLargest = 16 * 1024 + 3;  // one collective block and a ragged tail

// Every head misalignment (the vector loop starts at dst's first 64-byte boundary) and tail.
template <class T>
void expect_streaming_matches_cached(DType dtype) {
  const T inf = std::numeric_limits<T>::infinity();
  alignas(64) static T streamed_storage[kLargest + 64], cached_storage[kLargest + 64];
  for (StreamingIsa isa :
       {StreamingIsa::widest, StreamingIsa::avx512, StreamingIsa::avx2, StreamingIsa::none}) {
    if (!cpu_runs_streaming_isa(isa)) continue;
    for (int64_t n : {int64_t(0), int64_t(1), int64_t(7), int64_t(15), int64_t(16), int64_t(17),
                      int64_t(33), int64_t(100), kLargest})
      for (int64_t shift = 0; shift < 4; ++shift) {
        std::vector<T> a(static_cast<size_t>(n)), b(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i) {
          a[size_t(i)] = T(i) * T(0.37) - T(5);
          b[size_t(i)] = T(1) / T(i + 3);
        }
        T* streamed = streamed_storage + shift;  // `shift` elements past a 64-byte boundary
        T* cached = cached_storage + shift;
        const bool want = host_add_into_finite(cached, a.data(), b.data(), dtype, n);
        EXPECT_TRUE(want);
        EXPECT_EQ(host_add_into_finite_streaming_with(isa, streamed, a.data(), b.data(), dtype, n),
                  want);
        EXPECT_EQ(std::memcmp(streamed, cached, size_t(n) * sizeof(T)), 0)
            << "n " << n << " shift " << shift << " isa " << int(isa);
        if (n == 0) continue;
        for (int64_t at : {int64_t(0), n / 2, n - 1}) {  // head, vector body, tail
          auto bad = b;
          bad[size_t(at)] = (at % 2) ? inf : std::numeric_limits<T>::quiet_NaN();
          EXPECT_FALSE(
              host_add_into_finite_streaming_with(isa, streamed, a.data(), bad.data(), dtype, n))
              << "bad at " << at << " of " << n << " shift " << shift << " isa " << int(isa);
        }
      }
  }
}

TEST(StreamingSum, GivesTheCachedPathsBytesAndAnswerOnEveryIsaAndAlignment) {
  expect_streaming_matches_cached<float>(DType::float32);
  expect_streaming_matches_cached<double>(DType::float64);
}

TEST(StreamingSum, AFiniteSumThatOverflowsIsNotFinite) {
  std::vector<float> big(100, std::numeric_limits<float>::max()), dst(100);
  EXPECT_FALSE(
      host_add_into_finite_streaming(dst.data(), big.data(), big.data(), DType::float32, 100));
  EXPECT_EQ(dst[50], std::numeric_limits<float>::infinity());
}

TEST(StreamingSum, AccumulatesWhenDstAliasesAnOperandAndSumsIntegers) {
  std::vector<float> a{1, 2, 3}, b{10, 20, 30};
  EXPECT_TRUE(host_add_into_finite_streaming(a.data(), a.data(), b.data(), DType::float32, 3));
  EXPECT_EQ(a, (std::vector<float>{11, 22, 33}));
  EXPECT_TRUE(host_add_into_finite_streaming(b.data(), a.data(), b.data(), DType::float32, 3));
  EXPECT_EQ(b, (std::vector<float>{21, 42, 63}));
  std::vector<int64_t> x{5}, y{-7}, z{0};
  EXPECT_TRUE(host_add_into_finite_streaming(z.data(), x.data(), y.data(), DType::int64, 1));
  EXPECT_EQ(z[0], -2);
}

TEST(StreamingSum, StreamsResultsOfAtLeastTheLastLevelCachesSize) {
  EXPECT_GE(streaming_store_min_bytes(), int64_t(1) << 20);
  EXPECT_EQ(streaming_store_min_bytes(), streaming_store_min_bytes());
}

}  // namespace
}  // namespace troupe
