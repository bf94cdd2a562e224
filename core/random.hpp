#pragma once
// Deterministic, platform-independent random numbers: Philox4x32-10 (Salmon et al., SC'11), the
// counter-based generator TensorFlow and cuRAND use. std:: distributions are implementation-
// defined, so the same seed would give different tensors on different standard libraries.
// Element i of a fill depends only on (seed, stream, i): fills are reproducible and can be
// generated in parallel or in pieces.

#include <array>
#include <cstdint>

namespace troupe {

/// Philox4x32-10: maps a 128-bit counter and a 64-bit key to four 32-bit random words.
class Philox {
 public:
  using Block = std::array<uint32_t, 4>;
  explicit Philox(uint64_t seed, uint64_t stream = 0) : seed_(seed), stream_(stream) {}
  /// The four words for block `counter`.
  Block block(uint64_t counter) const;
  /// 32 random bits for element `index` (word index % 4 of block index / 4).
  uint32_t bits(uint64_t index) const;
  /// Uniform float in [0, 1) with 24 random bits, for element `index`.
  float uniform_float(uint64_t index) const;
  /// Uniform double in [0, 1) with 53 random bits, for element `index` (uses two words).
  double uniform_double(uint64_t index) const;
  /// Standard normal for element `index` (Box-Muller on two independent words).
  double normal(uint64_t index) const;
  /// Float standard normals for elements [first, first + n) into out[0, n): the fast bulk path
  /// (first + n <= 2^64).
  // Element i comes from block i / 4, whose words (w0, w1) and (w2, w3) are two Box-Muller pairs
  // giving elements 4b + {0, 1} and 4b + {2, 3} as r cos t and r sin t (see normal_pair). A
  // different sequence from normal(); like it, element i depends only on (seed, stream, i).
  /// The code fill_normal runs; every choice gives the same bits (tests/core/random_test.cpp).
  enum class Isa { automatic, baseline, avx2, avx512 };
  void fill_normal(float* out, uint64_t first, int64_t n, Isa isa = Isa::automatic) const;
  /// Whether this build and CPU can run `isa` (automatic and baseline: always). automatic takes
  /// the widest one supported.
  static bool supports(Isa isa);

 private:
  uint64_t seed_;
  uint64_t stream_;
};

// The float approximations fill_normal is built from, exported for tests. IEEE float operations
// only, in a fixed order (random.cpp is compiled with -ffp-contract=off, no -ffast-math), so every
// platform and ISA path gives the same bits. Accuracy, checked exhaustively over each domain by
// tests/core/random_test.cpp:
namespace random_math {
/// ln(m * 2^-24) for an integer m in [1, 2^24]: |error| <= 5e-7 and <= 1 float ulp (Cephes logf).
float log_unit(uint32_t m);
/// sin and cos of y in [-pi/4, pi/4]: |error| <= 6e-8 (Cephes sinf/cosf polynomials).
void sincos_quarter(float y, float& sin_y, float& cos_y);
/// The Box-Muller pair of two words: (r cos t, r sin t) with r = sqrt(-2 ln u), u in (0, 1] from
/// the top 24 bits of `radius` (so |r| <= 5.77), t = q pi/2 + (k + 1/2) pi/2^23 - pi/4 from the
/// top 2 (q) and next 22 (k) bits of `angle`. |error| <= 1e-6 against the same formula in double.
void normal_pair(uint32_t radius, uint32_t angle, float& x, float& y);
}  // namespace random_math

}  // namespace troupe
