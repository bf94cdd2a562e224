// Philox::fill_normal: the fast float normals. Same bits as a plain scalar reference on every ISA
// path, independent of how a range is split, the right distribution, and the float
// approximations within their documented bounds.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "core/random.hpp"
#include "core/tensor.hpp"

using namespace troupe;

namespace {

// The documented algorithm, one element at a time: block i / 4, words (w0, w1) give elements
// 4b + 0 (r cos t) and 4b + 1 (r sin t), words (w2, w3) give 4b + 2 and 4b + 3.
float reference_normal(const Philox& philox, uint64_t i) {
  Philox::Block w = philox.block(i / 4);
  uint32_t radius = w[(i % 4) / 2 * 2], angle = w[(i % 4) / 2 * 2 + 1];
  float r = std::sqrt(-2.0f * random_math::log_unit((radius >> 8) + 1));
  uint32_t q = angle >> 30;
  int32_t k = int32_t((angle >> 8) & 0x3FFFFFu) - 0x200000;
  float a = (float(k) + 0.5f) * float(1.5707963267948966 / 4194304.0);
  float s, c;
  random_math::sincos_quarter(a, s, c);
  const float cos_t[4] = {c, -s, -c, s}, sin_t[4] = {s, c, -s, -c};
  return r * (i % 2 == 0 ? cos_t[q] : sin_t[q]);
}

uint32_t bits_of(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

std::vector<Philox::Isa> supported_isas() {
  std::vector<Philox::Isa> isas;
  for (auto isa :
       {Philox::Isa::automatic, Philox::Isa::baseline, Philox::Isa::avx2, Philox::Isa::avx512})
    if (Philox::supports(isa)) isas.push_back(isa);
  return isas;
}

std::vector<float> fill(const Philox& philox, uint64_t first, int64_t n,
                        Philox::Isa isa = Philox::Isa::automatic) {
  std::vector<float> out(size_t(n) + 1, 1234.5f);  // one guard element past the end
  philox.fill_normal(out.data(), first, n, isa);
  EXPECT_EQ(out.back(), 1234.5f) << "fill_normal wrote past n = " << n;
  out.pop_back();
  return out;
}

}  // namespace

TEST(FillNormal, EveryIsaMatchesTheScalarReferenceBitExactlyForUnalignedRaggedRanges) {
  std::mt19937_64 pick(20240601);
  Philox philox(0x0123456789ABCDEFull, 13);
  // Ranges of every length below two wide chunks, at unaligned starts, including counters whose
  // high word is set and a block counter that crosses 2^32.
  std::vector<std::pair<uint64_t, int64_t>> ranges = {
      {0, 0}, {0, 1}, {1, 3}, {3, 5}, {0, 128}, {2, 129}, {(uint64_t(1) << 34) - 7, 300}};
  for (int t = 0; t < 200; ++t)
    ranges.push_back({pick() >> (2 + pick() % 62), int64_t(pick() % 300)});
  for (auto isa : supported_isas()) {
    for (auto [first, n] : ranges) {
      std::vector<float> got = fill(philox, first, n, isa);
      for (int64_t k = 0; k < n; ++k)
        ASSERT_EQ(bits_of(got[size_t(k)]), bits_of(reference_normal(philox, first + uint64_t(k))))
            << "isa " << int(isa) << ", first " << first << ", n " << n << ", element " << k;
    }
  }
}

TEST(FillNormal, AvxAndBaselinePathsGiveIdenticalBits) {
  if (!Philox::supports(Philox::Isa::avx2)) GTEST_SKIP() << "no AVX2 path on this CPU or build";
  Philox philox(99, 7);
  for (uint64_t first : {uint64_t(0), uint64_t(5), uint64_t(1) << 40}) {
    auto a = fill(philox, first, 100003, Philox::Isa::avx2);
    auto b = fill(philox, first, 100003, Philox::Isa::baseline);
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0) << "first " << first;
  }
}

TEST(FillNormal, Avx512AndBaselinePathsGiveIdenticalBits) {
  if (!Philox::supports(Philox::Isa::avx512))
    GTEST_SKIP() << "no AVX-512 path on this CPU or build";
  Philox philox(99, 7);
  for (uint64_t first : {uint64_t(0), uint64_t(5), uint64_t(1) << 40}) {
    auto a = fill(philox, first, 100003, Philox::Isa::avx512);
    auto b = fill(philox, first, 100003, Philox::Isa::baseline);
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0) << "first " << first;
  }
}

TEST(FillNormal, PiecesOfARangeEqualTheWholeRange) {
  Philox philox(5, 1);
  const uint64_t first = 1001;
  const int64_t n = 5000;
  std::vector<float> whole = fill(philox, first, n);
  std::mt19937_64 pick(7);
  for (int t = 0; t < 20; ++t) {
    std::vector<float> pieces(static_cast<size_t>(n));
    for (int64_t a = 0; a < n;) {
      int64_t b = std::min<int64_t>(n, a + 1 + int64_t(pick() % 400));
      philox.fill_normal(pieces.data() + a, first + uint64_t(a), b - a);
      a = b;
    }
    ASSERT_EQ(std::memcmp(pieces.data(), whole.data(), whole.size() * sizeof(float)), 0);
  }
}

TEST(FillNormal, DependsOnSeedAndStream) {
  auto a = fill(Philox(1, 0), 0, 64), b = fill(Philox(2, 0), 0, 64), c = fill(Philox(1, 1), 0, 64);
  EXPECT_NE(a, b);
  EXPECT_NE(a, c);
}

TEST(FillNormal, MillionSamplesHaveStandardNormalMomentsAndTails) {
  const int64_t n = 1000000;
  std::vector<float> x = fill(Philox(2024, 3), 0, n);
  double m1 = 0, m2 = 0, m4 = 0, lag1 = 0;
  int64_t beyond3 = 0;
  for (int64_t i = 0; i < n; ++i) {
    double v = x[size_t(i)];
    m1 += v;
    m2 += v * v;
    m4 += v * v * v * v;
    beyond3 += std::fabs(v) > 3.0;
    if (i > 0) lag1 += v * x[size_t(i - 1)];  // catches a cos/sin pair that is not independent
  }
  m1 /= double(n), m2 /= double(n), m4 /= double(n), lag1 /= double(n - 1);
  // Tolerances are about 5 standard errors at n = 1e6.
  EXPECT_NEAR(m1, 0.0, 0.005);
  EXPECT_NEAR(m2, 1.0, 0.007);
  EXPECT_NEAR(m4, 3.0, 0.05);
  EXPECT_NEAR(lag1, 0.0, 0.005);
  EXPECT_NEAR(double(beyond3) / double(n), 0.0026998, 0.00026);  // P(|x| > 3)
}

TEST(RandomMath, LogUnitIsWithinItsBoundOverTheWholeDomain) {
  double worst = 0, worst_ulps = 0;
  for (uint32_t m = 1; m <= (1u << 24); ++m) {
    double exact = std::log(double(m) * 0x1p-24);
    double err = std::fabs(double(random_math::log_unit(m)) - exact);
    worst = std::max(worst, err);
    if (exact != 0)
      worst_ulps = std::max(worst_ulps, err / std::ldexp(1.0, std::ilogb(float(exact)) - 23));
  }
  EXPECT_LE(worst, 5e-7);
  EXPECT_LE(worst_ulps, 1.0);
  EXPECT_EQ(random_math::log_unit(1u << 24), 0.0f);  // u = 1: radius exactly 0, never NaN
}

TEST(RandomMath, SincosQuarterIsWithinItsBoundOnEveryAngleUsedAndTheEnds) {
  const float step = float(1.5707963267948966 / 4194304.0);
  std::vector<float> angles = {-0.78539819f, 0.78539819f, 0.0f};
  for (int32_t k = -(1 << 21); k < (1 << 21); ++k) angles.push_back((float(k) + 0.5f) * step);
  double worst_sin = 0, worst_cos = 0;
  for (float a : angles) {
    float s, c;
    random_math::sincos_quarter(a, s, c);
    worst_sin = std::max(worst_sin, std::fabs(double(s) - std::sin(double(a))));
    worst_cos = std::max(worst_cos, std::fabs(double(c) - std::cos(double(a))));
  }
  EXPECT_LE(worst_sin, 6e-8);
  EXPECT_LE(worst_cos, 6e-8);
}

TEST(RandomMath, NormalPairIsWithinItsBoundOfDoublePrecisionBoxMuller) {
  Philox philox(1, 2);
  double worst = 0;
  for (uint64_t b = 0; b < 1000000; ++b) {
    Philox::Block w = philox.block(b);
    float x, y;
    random_math::normal_pair(w[0], w[1], x, y);
    double r = std::sqrt(-2.0 * std::log(double((w[0] >> 8) + 1) * 0x1p-24));
    double k = double((w[1] >> 8) & 0x3FFFFFu);
    double t = double(w[1] >> 30) * M_PI / 2 + (k + 0.5) * M_PI / 8388608.0 - M_PI / 4;
    worst = std::max({worst, std::fabs(x - r * std::cos(t)), std::fabs(y - r * std::sin(t))});
  }
  EXPECT_LE(worst, 1e-6);
}

TEST(FillNormal, Float32RandomNormalIsTheBulkFillScaled) {
  Tensor t = Tensor::random_normal({7, 45}, 11);  // float32, mean 0, stddev 1: stream 1
  std::vector<float> expected = fill(Philox(11, 1), 0, 7 * 45);
  EXPECT_EQ(t.to_vector<float>(), expected);
  Tensor shifted = Tensor::random_normal({7, 45}, 11, 3.0, 0.5);
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_EQ(shifted.to_vector<float>()[i], float(3.0 + 0.5 * double(expected[i])));
}
