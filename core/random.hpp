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

 private:
  uint64_t seed_;
  uint64_t stream_;
};

}  // namespace troupe
