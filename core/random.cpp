#include "core/random.hpp"

#include <cmath>

namespace troupe {
namespace {

constexpr uint32_t kMul0 = 0xD2511F53u;
constexpr uint32_t kMul1 = 0xCD9E8D57u;
constexpr uint32_t kWeyl0 = 0x9E3779B9u;
constexpr uint32_t kWeyl1 = 0xBB67AE85u;

inline void mulhilo(uint32_t a, uint32_t b, uint32_t& hi, uint32_t& lo) {
  uint64_t p = uint64_t(a) * uint64_t(b);
  hi = uint32_t(p >> 32);
  lo = uint32_t(p);
}

}  // namespace

Philox::Block Philox::block(uint64_t counter) const {
  Block c{uint32_t(counter), uint32_t(counter >> 32), uint32_t(stream_), uint32_t(stream_ >> 32)};
  uint32_t k0 = uint32_t(seed_), k1 = uint32_t(seed_ >> 32);
  for (int round = 0; round < 10; ++round) {
    uint32_t hi0, lo0, hi1, lo1;
    mulhilo(kMul0, c[0], hi0, lo0);
    mulhilo(kMul1, c[2], hi1, lo1);
    c = {hi1 ^ c[1] ^ k0, lo1, hi0 ^ c[3] ^ k1, lo0};
    k0 += kWeyl0;
    k1 += kWeyl1;
  }
  return c;
}

uint32_t Philox::bits(uint64_t index) const { return block(index / 4)[index % 4]; }

float Philox::uniform_float(uint64_t index) const {
  return float(bits(index) >> 8) * (1.0f / 16777216.0f);
}

double Philox::uniform_double(uint64_t index) const {
  Block b = block(index);
  uint64_t x = (uint64_t(b[0]) << 32 | b[1]) >> 11;
  return double(x) * (1.0 / 9007199254740992.0);
}

double Philox::normal(uint64_t index) const {
  Block b = block(index);
  // u1 in (0, 1] so log() is finite; u2 in [0, 1).
  double u1 = (double((uint64_t(b[0]) << 32 | b[1]) >> 11) + 1.0) * (1.0 / 9007199254740992.0);
  double u2 = double((uint64_t(b[2]) << 32 | b[3]) >> 11) * (1.0 / 9007199254740992.0);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

}  // namespace troupe
